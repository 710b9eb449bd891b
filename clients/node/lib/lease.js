'use strict';
// One held lease: its token, the local deadline, the renewal loop, the
// watchdog (the fence's, for all its leases, or with fence 1.2 one on a
// connection of the lease's own), and transactions that carry the token.
//
// The local deadline is the send time of the last successful renewal (or of
// the grant) plus the TTL, on the monotonic clock (performance.now()): the
// server's expiry cannot come before it.  Loss is final: once declared,
// nothing makes the lease held again.
const { performance } = require('node:perf_hooks');
const { SQL, interval } = require('./config');
const {
  LeaseLostError, LeaseNotHeldError, classify, sqlstateOf, QUERY_CANCELED,
} = require('./errors');
const { withTimeout, endQuietly, cancelBackend } = require('./pg');

// fence_wait_lease_end and fence_lease_status say how a lease ended; a
// release this process did not do is "broken" to it.
function howFromServer(status) {
  if (status === 'superseded') return 'superseded';
  if (status === 'released') return 'broken';
  return 'expired';
}

// The server's start time, comparable with ===.
function startKey(started) {
  return started instanceof Date ? started.getTime() : String(started);
}

class Lease {
  constructor(fence, spec, own, row, sentAt) {
    this._fence = fence;
    this.key = spec.key;
    this.owner = spec.owner;
    this.ttlMs = spec.ttlMs;
    this.permits = spec.permits;
    this.token = BigInt(row.token);
    this.expiresAt = row.expires_at;
    this._started = startKey(row.started);
    this._timing = spec.timing;
    this._deadline = sentAt + spec.ttlMs;
    this._own = own;
    this._controller = new AbortController();
    this.signal = this._controller.signal;
    this.how = null;
    this.suspended = false;
    this._error = null;
    this._stopping = false;
    this._active = new Map(); // pooled client -> the cancel request sent for it, if any
    this._wakers = new Set();
    this._loops = [];
    this._releasing = null;
    this._dog = null; // the fence's watchdog, when it watches this lease
  }

  // True once the lease is lost or released.
  get lost() {
    return this.how !== null;
  }

  // Milliseconds left before the local deadline.
  remainingMs(now = performance.now()) {
    return this._deadline - now;
  }

  // Throws LeaseLostError once the lease is lost (or released).
  check() {
    if (this.how !== null) throw this._error;
  }

  // A transaction on a pooled client that carries this lease's token
  // (fence_use_token as its first statement, for this transaction only), so
  // the client goes back to the pool carrying none.  Commits when fn
  // resolves, rolls back when it throws or when the lease was lost meanwhile.
  async transaction(fn) {
    this.check();
    const client = await this._fence.pool.connect();
    this._active.set(client, null);
    let broken;
    try {
      await client.query('BEGIN');
      this.check();
      await client.query(SQL.useToken, [this.token.toString(), this.key]);
      const result = await fn(client);
      this.check();
      await client.query('COMMIT');
      return result;
    } catch (e) {
      // A cancel request sent for this client lands before the rollback.
      const cancelling = this._active.get(client);
      if (cancelling) await cancelling;
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError;
      }
      throw await this._translate(e);
    } finally {
      const cancelling = this._active.get(client);
      this._active.delete(client);
      if (cancelling && !broken) {
        // Sent after the last statement ended: the server ignores a cancel
        // that finds its backend idle, but do not hand the client on while
        // one may still be on its way.
        const delivered = await cancelling;
        if (!delivered) broken = new Error('a cancel request for this connection was not confirmed');
      }
      client.release(broken);
    }
  }

  // Give the lease back (fence_release, by its token) and stop renewing and
  // watching it.  Resolves true if the server still had it, false if it was
  // no longer held.  Idempotent.
  release() {
    if (!this._releasing) this._releasing = this._release();
    return this._releasing;
  }

  // -- internals ------------------------------------------------------------

  _start() {
    // Neither loop is meant to throw; should one, the renewals' fallback
    // is gone, so the lease is given up rather than trusted blindly.
    const failed = (what) => (e) => {
      this._fence.emit('warning', this, new Error(`the ${what} of lease "${this.key}" failed: ${e.message}`, { cause: e }));
      if (what === 'renewal loop') this._lose('deadline', e);
    };
    this._loops.push(this._renewLoop().catch(failed('renewal loop')));
    if (this._dog) this._dog.add(this);
    else this._loops.push(this._watch().catch(failed('watchdog')));
  }

  // Was the server that answered `started` the one that granted the lease?
  _sameServer(started) {
    return startKey(started) === this._started;
  }

  async _release() {
    this._stopping = true;
    if (this._dog) this._dog.remove(this);
    this._wakeUp();
    const params = [this.key, this.token.toString()];
    let released = false;
    try {
      const r = await withTimeout(this._fence.pool.query(SQL.release, params),
        Math.max(this._timing.tryTimeoutMs, 1000), 'the release');
      released = r.rows[0].released === true;
    } catch (first) {
      let conn;
      try {
        conn = await this._fence._connect();
        const r = await withTimeout(conn.query(SQL.release, params), 5000, 'the release');
        released = r.rows[0].released === true;
      } catch {
        this._fence.emit('warning', this, new Error(
          `could not release lease "${this.key}" (${first.message}); it ends by its TTL`, { cause: first }));
      } finally {
        await endQuietly(conn);
      }
    }
    const own = this._own;
    this._own = null;
    await endQuietly(own);
    await Promise.allSettled(this._loops);
    this._mark('released');
    this._fence.emit('released', this, { held: released });
    return released;
  }

  // Declare the lease lost (the first word of it wins): abort the signal,
  // cancel the statements of its transactions, tell the fence.
  _lose(how, cause) {
    if (!this._mark(how, cause)) return;
    for (const client of this._active.keys()) {
      if (this._active.get(client) === null) {
        this._active.set(client, cancelBackend(this._fence._Client, client));
      }
    }
    this._fence.emit('lost', this, this._error);
  }

  _mark(how, cause) {
    if (this.how !== null) return false;
    this.how = how;
    this._error = new LeaseLostError(this.key, this.token, how, cause !== undefined ? { cause } : undefined);
    this._wakeUp();
    this._controller.abort(this._error);
    return true;
  }

  _suspend(err) {
    if (this.how !== null || this.suspended) return;
    this.suspended = true;
    this._fence.emit('suspended', this, err);
  }

  _renewed(sentAt, expiresAt) {
    if (this.how !== null) return;
    this._deadline = Math.max(this._deadline, sentAt + this.ttlMs);
    this.expiresAt = expiresAt;
    this.suspended = false;
    this._fence.emit('renewed', this);
  }

  // The error to throw for a driver's error; LF002 also marks the lease
  // lost, and a statement cancelled because the lease was lost is the
  // lease's LeaseLostError.
  async _translate(e) {
    const fe = classify(e);
    if (fe) {
      if (fe instanceof LeaseNotHeldError && this.how === null) {
        this._lose(await this._howEnded(), e);
      }
      return fe;
    }
    if (this.how !== null && this.how !== 'released' && sqlstateOf(e) === QUERY_CANCELED) {
      return new LeaseLostError(this.key, this.token, this.how, { cause: e });
    }
    return e;
  }

  // How the lease ended, asked after the fact through the pool: a server
  // started since the grant ended it with its restart.
  async _howEnded() {
    try {
      const r = await withTimeout(this._fence.pool.query(SQL.status, [this.key, this.token.toString()]),
        this._timing.tryTimeoutMs, 'the status check');
      const { status, started } = r.rows[0];
      if (startKey(started) !== this._started) return 'connection';
      return howFromServer(status);
    } catch {
      return howFromServer(null);
    }
  }

  // Sleep ms, or less if the lease is stopped or lost meanwhile.
  _sleep(ms) {
    let done;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), Math.max(ms, 0));
      done = () => {
        clearTimeout(timer);
        resolve();
      };
      this._wakers.add(done);
    }).finally(() => {
      this._wakers.delete(done);
    });
  }

  _wakeUp() {
    for (const wake of this._wakers) wake();
  }

  async _renewLoop() {
    const t = this._timing;
    const params = [this.key, this.token.toString(), interval(this.ttlMs)];
    let pending = null;
    let delay = t.nextRenewal();
    while (!this._stopping && this.how === null) {
      await this._sleep(Math.min(delay, Math.max(this.remainingMs(), 0)));
      if (this._stopping || this.how !== null) return;
      if (this.remainingMs() <= 0) {
        this._lose('deadline');
        return;
      }
      if (pending) {
        // The last try is still on its way: it counts as failed.
        this._suspend(new Error('the last renewal is still pending'));
        delay = t.nextRetry();
        continue;
      }
      const sentAt = performance.now();
      const attempt = this._fence.pool.query(SQL.renew, params);
      pending = attempt;
      attempt.then(() => {}, () => {}).finally(() => {
        if (pending === attempt) pending = null;
      });
      let row;
      try {
        row = (await withTimeout(attempt, t.tryTimeoutMs, 'the renewal')).rows[0];
      } catch (e) {
        if (this._stopping) return;
        if (classify(e)) {
          this._lose(await this._howEnded(), e);
          return;
        }
        // The server could not be reached, or took too long: suspended
        // until the deadline.
        this._suspend(e);
        delay = t.nextRetry();
        continue;
      }
      if (this._stopping) return;
      if (row.ok === true) {
        this._renewed(sentAt, row.expires_at);
        delay = t.nextRenewal();
      } else {
        this._lose(await this._howEnded());
        return;
      }
    }
  }

  // The watchdog: the lease's own connection sleeps in fence_wait_lease_end
  // until the lease ends, asking again every poll (a NULL answer proves the
  // connection alive); a connection that fails is replaced once the lease is
  // known to be still held.
  async _watch() {
    const poll = this._fence._watchdogPollMs;
    const params = [this.key, this.token.toString(), interval(poll)];
    let conn = this._own;
    while (!this._stopping && this.how === null) {
      if (!conn) {
        conn = await this._reconnect();
        if (!conn) return;
        continue;
      }
      let how;
      try {
        const r = await conn.query({ text: SQL.waitEnd, values: params, query_timeout: poll + 10000 });
        how = r.rows[0].how;
      } catch (e) {
        if (this._stopping) return;
        if (this._own === conn) this._own = null;
        endQuietly(conn);
        conn = null;
        continue;
      }
      if (how === null || this._stopping) continue;
      this._lose(howFromServer(how));
      return;
    }
  }

  async _reconnect() {
    while (!this._stopping && this.how === null) {
      let conn;
      try {
        conn = await this._fence._connectOwn();
        const r = await withTimeout(conn.query(SQL.status, [this.key, this.token.toString()]),
          this._fence._connectTimeoutMs, 'the status check');
        const { status, started } = r.rows[0];
        if (startKey(started) !== this._started) {
          endQuietly(conn);
          this._lose('connection');
          return null;
        }
        if (status !== 'held') {
          endQuietly(conn);
          this._lose(howFromServer(status));
          return null;
        }
        if (this._stopping) {
          endQuietly(conn);
          return null;
        }
        this._own = conn;
        return conn;
      } catch {
        endQuietly(conn);
        await this._sleep(this._timing.nextRetry());
      }
    }
    return null;
  }
}

module.exports = { Lease, howFromServer };
