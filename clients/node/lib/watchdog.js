'use strict';
// One watchdog for every lease of a Fence, when the server has
// fence_wait_leases_end (fence 1.3): one connection sleeps in one call on the
// whole set, and the server answers the moment any lease of it ends.
//
// A lease joins the set once it has been held for JOIN_AFTER_MS.  The call
// running then does not watch it, so the watchdog cancels that call
// (PostgreSQL's cancel request) and calls again with the new set: the new
// lease is watched within a round trip, not after a poll.  A cancel request
// that reaches the server before the call starts cancels nothing, so it is
// sent again while that call still runs; one request at most is on its way
// at a time, for however many leases join meanwhile.  A lease that leaves the
// set needs no cancel: its release ends the running call by itself, with a
// row the watchdog ignores.  When no lease is left, the connection is closed
// (nothing keeps the process alive).  On a server without the function
// (fence 1.2), each lease watches itself on a connection of its own, as
// before.
const { setTimeout: sleep } = require('node:timers/promises');
const { SQL, interval } = require('./config');
const { sqlstateOf, QUERY_CANCELED } = require('./errors');
const { endQuietly, cancelBackend } = require('./pg');

// fence_wait_leases_end watches at most this many leases in one call; the
// others rely on their renewals.
const MAX_WATCHED = 10000;
// Pauses (ms) between cancel requests for one call that goes on.
const CANCEL_RETRIES_MS = [50, 100, 200, 500, 1000, 2000, 5000];
// How long a lease is held (ms) before it joins the watched set.  Most
// leases of a job loop are released sooner: such a lease never makes the
// watchdog open its connection, cancel its call or call again, so a short
// job costs the grant's round trip and the release's, as SQL written by hand
// would.  A lease lost meanwhile is still reported, when it joins: the call
// made then returns at once, since the lease is no longer held.  Renewals
// stay the fallback all along.
const JOIN_AFTER_MS = 100;

class Watchdog {
  constructor(fence, howFromServer) {
    this._fence = fence;
    this._howFromServer = howFromServer;
    this._leases = new Set();
    this._joining = new Map(); // lease -> the timer that makes it join
    this._added = 0; // leases joined so far
    this._issued = -1; // the _added the running call watches, or -1
    this._calls = 0;
    this._cancelling = null; // the cancel requests on their way, if any
    this._conn = null;
    this._running = null;
  }

  // Watch the lease, once it has been held for JOIN_AFTER_MS.
  add(lease) {
    if (this._joining.has(lease) || this._leases.has(lease)) return;
    this._joining.set(lease, setTimeout(() => {
      this._joining.delete(lease);
      this._join(lease);
    }, JOIN_AFTER_MS));
  }

  remove(lease) {
    const timer = this._joining.get(lease);
    if (timer !== undefined) {
      clearTimeout(timer);
      this._joining.delete(lease);
    }
    this._leases.delete(lease);
  }

  _join(lease) {
    if (lease._stopping || lease.how !== null) return;
    this._leases.add(lease);
    this._added += 1;
    if (!this._running) this._start();
    else this._cancelStale();
  }

  _start() {
    this._running = this._run()
      .catch((e) => this._fence.emit('warning', null, new Error(`the watchdog failed: ${e.message}`, { cause: e })))
      .finally(() => {
        this._running = null;
        // A lease joined while the last call ended.
        if (this._leases.size) this._start();
      });
  }

  // Does the running call miss a lease that joined since it was made?
  _stale() {
    return this._conn !== null && this._issued >= 0 && this._issued !== this._added;
  }

  // Cancel the running call while it misses a lease, one request at a time:
  // leases that join while one is on its way are served by the call made
  // after it.
  _cancelStale() {
    if (this._cancelling || !this._stale()) return;
    this._cancelling = this._cancelWhileStale()
      .finally(() => {
        this._cancelling = null;
      });
  }

  async _cancelWhileStale() {
    let calls = -1;
    let tries = 0;
    while (this._stale()) {
      if (this._calls !== calls) {
        calls = this._calls;
        tries = 0;
      }
      // A call that outlasts every retry is left to its poll.
      if (tries === CANCEL_RETRIES_MS.length) return;
      await cancelBackend(this._fence._Client, this._conn);
      await sleep(CANCEL_RETRIES_MS[tries]);
      tries += 1;
    }
  }

  async _run() {
    const poll = this._fence._watchdogPollMs;
    let conn = null;
    try {
      while (this._leases.size) {
        if (!conn) {
          conn = await this._open();
          continue;
        }
        const watched = [...this._leases].slice(0, MAX_WATCHED);
        this._issued = this._added;
        this._calls += 1;
        let rows;
        try {
          const r = await conn.query({
            text: SQL.waitLeasesEnd,
            values: [watched.map((l) => l.key), watched.map((l) => l.token.toString()), interval(poll)],
            query_timeout: poll + 10000,
          });
          rows = r.rows;
        } catch (e) {
          this._issued = -1;
          if (sqlstateOf(e) === QUERY_CANCELED) continue; // a lease was added: ask again
          this._conn = null;
          endQuietly(conn);
          conn = null;
          await sleep(500 + Math.random() * 500);
          continue;
        }
        this._issued = -1;
        for (const row of rows) {
          const token = BigInt(row.token);
          for (const lease of watched) {
            if (lease.key === row.key && lease.token === token && this._leases.has(lease)) {
              this._leases.delete(lease);
              if (!lease._stopping) lease._lose(this._howFromServer(row.status));
            }
          }
        }
      }
    } finally {
      this._issued = -1;
      if (conn) {
        if (this._conn === conn) this._conn = null;
        await endQuietly(conn);
      }
    }
  }

  // A new watchdog connection; the leases of a server that restarted since
  // they were granted are lost.
  async _open() {
    let conn;
    let started;
    try {
      conn = await this._fence._connectOwn();
      started = (await conn.query(SQL.serverStarted)).rows[0].started;
    } catch {
      endQuietly(conn);
      await sleep(500 + Math.random() * 500);
      return null;
    }
    for (const lease of [...this._leases]) {
      if (!lease._sameServer(started)) {
        this._leases.delete(lease);
        lease._lose('connection');
      }
    }
    this._conn = conn;
    return conn;
  }
}

module.exports = { Watchdog, MAX_WATCHED, JOIN_AFTER_MS };
