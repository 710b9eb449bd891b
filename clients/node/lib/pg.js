'use strict';
// What pgfence needs from node-postgres beyond query(): a connection of its
// own, a cancel request for a statement on another connection, and bounds
// on how long a try may take.

class TimeoutError extends Error {
  constructor(what, ms) {
    super(`${what} took longer than ${Math.round(ms)} ms`);
    this.name = 'TimeoutError';
  }
}

// promise, or a TimeoutError after ms.  The promise goes on; the caller
// decides what its late result means.
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function endQuietly(client) {
  if (!client) return;
  try {
    await withTimeout(client.end(), 2000, 'closing a connection');
  } catch {
    // It is going away either way.
  }
}

// Ask the server to cancel what `target` (a connected pg.Client) is running:
// PostgreSQL's cancel request, naming the target's backend pid and secret
// key, sent on a new connection to where the target is connected (its own
// host and port: behind PgBouncer, the pooler, which issued that key), as
// pg's own Client#cancel does.  Resolves true once the request is delivered
// (the server closes that connection after acting on it), false if it
// could not be.
function cancelBackend(Client, target) {
  return new Promise((resolve) => {
    if (!target || !target.processID) {
      resolve(false);
      return;
    }
    let done = false;
    let con;
    const finish = (ok) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        con.end();
      } catch {
        // Closed already.
      }
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), 5000);
    try {
      const params = target.connectionParameters || {};
      const canceller = new Client({ host: target.host, port: target.port, ssl: params.ssl });
      con = canceller.connection;
      con.on('connect', () => con.cancel(target.processID, target.secretKey));
      con.on('end', () => finish(true));
      con.on('error', () => finish(false));
      if (canceller.host && canceller.host.startsWith('/')) {
        con.connect(`${canceller.host}/.s.PGSQL.${canceller.port}`);
      } else {
        con.connect(canceller.port, canceller.host);
      }
    } catch {
      finish(false);
    }
  });
}

module.exports = { TimeoutError, withTimeout, endQuietly, cancelBackend };
