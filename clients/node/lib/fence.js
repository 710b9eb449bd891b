'use strict';
// The Fence: leases (and permits, and breakers) on one database, through a
// node-postgres Pool.
const { EventEmitter } = require('node:events');
const { performance } = require('node:perf_hooks');
const cfg = require('./config');
const {
  LeaseUnavailableError, LeaseLostError, classify, sqlstateOf, LOCK_NOT_AVAILABLE,
} = require('./errors');
const { Lease, howFromServer } = require('./lease');
const { withTimeout, endQuietly, cancelBackend } = require('./pg');
const { Breaker } = require('./breaker');
const { Watchdog } = require('./watchdog');

class Fence extends EventEmitter {
  // pool: a pg.Pool.  options.clientConfig: the configuration of the fence's
  // own connections, its watchdog's and a lease's while it waits for a held
  // key (default: the pool's), e.g. to reach the server past a
  // transaction pooler; options.renewTimeoutMs bounds each renewal (default
  // a third of the TTL); options.connectTimeoutMs bounds making a lease's
  // own connection (default 10 s); options.watchdogPollMs, how often the
  // watchdog asks again (default 30 s).
  constructor(pool, options = {}) {
    super();
    if (!pool || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
      throw new TypeError('new Fence(pool) takes a pg.Pool');
    }
    this.pool = pool;
    this._Client = options.Client || pool.Client || require('pg').Client;
    const base = options.clientConfig || pool.options || {};
    this._connectTimeoutMs = options.connectTimeoutMs !== undefined
      ? cfg.checkMs(options.connectTimeoutMs, 'connectTimeoutMs') : 10000;
    this._config = { ...base, keepAlive: true, connectionTimeoutMillis: this._connectTimeoutMs };
    this._renewTimeoutMs = options.renewTimeoutMs !== undefined
      ? cfg.checkMs(options.renewTimeoutMs, 'renewTimeoutMs') : undefined;
    this._watchdogPollMs = options.watchdogPollMs !== undefined
      ? cfg.checkMs(options.watchdogPollMs, 'watchdogPollMs') : cfg.WATCHDOG_POLL_MS;
    // What the server has (undefined: not asked yet; see _serverHas), and
    // the one watchdog of all the leases when it has fence_wait_leases_end.
    this._server = undefined;
    this._dog = null;
  }

  // Take the lease on key; resolves to a held Lease, to be given back with
  // lease.release().  opts: ttlMs (default 30000); waitMs (undefined: as
  // long as it takes, 0: try once, a number: that long, then
  // LeaseUnavailableError); owner (default: a name made for this lease);
  // signal, an AbortSignal that abandons the wait.
  async acquire(key, opts = {}) {
    return this._take(this._spec(key, opts, undefined), opts.signal);
  }

  // One of `permits` permits of key (a bulkhead), as a lease of its own.
  async acquirePermit(key, permits, opts = {}) {
    return this._take(this._spec(key, opts, cfg.checkPermits(permits)), opts.signal);
  }

  // Run fn(lease, signal) holding the lease; release it after, also when fn
  // throws.  Rejects with LeaseLostError if the lease ended before fn did.
  async withLease(key, opts, fn) {
    if (typeof opts === 'function') [opts, fn] = [{}, opts];
    return this._with(await this.acquire(key, opts || {}), fn);
  }

  async withPermit(key, permits, opts, fn) {
    if (typeof opts === 'function') [opts, fn] = [{}, opts];
    return this._with(await this.acquirePermit(key, permits, opts || {}), fn);
  }

  // The shared circuit breaker `name`.
  breaker(name) {
    return new Breaker(this.pool, name);
  }

  // Run fn() through the breaker `name`: BreakerOpenError while it is open,
  // else fn's outcome and duration reported to it.
  async withBreaker(name, opts, fn) {
    if (typeof opts === 'function') [opts, fn] = [{}, opts];
    return this.breaker(name).call(opts || {}, fn);
  }

  // -- internals ------------------------------------------------------------

  _spec(key, opts, permits) {
    const ttlMs = opts.ttlMs !== undefined ? cfg.checkMs(opts.ttlMs, 'ttlMs') : 30000;
    return {
      key: cfg.checkKey(key),
      ttlMs,
      waitMs: cfg.checkWait(opts.waitMs),
      owner: opts.owner !== undefined ? cfg.checkOwner(opts.owner) : cfg.generatedOwner(),
      permits,
      timing: new cfg.Timing(ttlMs, this._renewTimeoutMs),
    };
  }

  async _with(lease, fn) {
    let result;
    let failure;
    let threw = false;
    try {
      result = await fn(lease, lease.signal);
    } catch (e) {
      threw = true;
      failure = e;
    }
    const lostBefore = lease.how;
    const lostError = lease._error;
    await lease.release();
    if (threw) {
      // An abort that the lease's signal caused is the lease's loss.
      if (lostBefore !== null && (failure === lostError
        || (failure && failure.name === 'AbortError'))) {
        throw lostError;
      }
      throw failure;
    }
    if (lostBefore !== null) throw lostError;
    return result;
  }

  async _connect() {
    const client = new this._Client(this._config);
    // A dropped connection also rejects what it runs; this keeps the
    // 'error' event from being unhandled.
    client.on('error', () => {});
    try {
      await withTimeout(client.connect(), this._connectTimeoutMs + 1000, 'connecting');
    } catch (e) {
      endQuietly(client);
      throw e;
    }
    return client;
  }

  // A connection of the fence's own, for a grant that waits or a watchdog.
  async _connectOwn() {
    const client = await this._connect();
    try {
      await client.query(cfg.SQL.ownSession);
    } catch (e) {
      endQuietly(client);
      throw e;
    }
    return client;
  }

  // A lease is granted on a pooled connection when the key is free and the
  // server has fence_forget_token: one statement, no connection of its own.
  // Otherwise (a wait, or fence 1.2), on a connection of its own.
  async _take(spec, signal) {
    if (signal && signal.aborted) throw signal.reason;
    const server = await this._serverHas(this.pool);
    if (server && server.multi && server.forget) {
      const lease = await this._takeOnPool(spec, signal);
      if (lease) return lease;
      if (spec.waitMs === 0) throw new LeaseUnavailableError(spec.key, spec.waitMs);
      if (signal && signal.aborted) throw signal.reason;
    }
    return this._takeOwn(spec, signal);
  }

  // The grant as fence_try_lease (or fence_try_permit) on a pooled
  // connection, forgotten there in the same statement, so that the
  // connection goes back to the pool carrying no token.  Resolves with the
  // lease, or null if the key is not free.
  async _takeOnPool(spec, signal) {
    const params = [spec.key, cfg.interval(spec.ttlMs), spec.owner];
    if (spec.permits !== undefined) params.push(spec.permits);
    const sql = spec.permits !== undefined ? cfg.SQL.poolTryPermit : cfg.SQL.poolTryLease;
    const client = await this.pool.connect();
    const sentAt = performance.now();
    let row;
    try {
      row = (await client.query(sql, params)).rows[0];
    } catch (e) {
      // Without its answer, the grant may have been made, and that session
      // may remember its token: the connection is not handed on, and what
      // this owner holds of the key is given back.
      client.release(e instanceof Error ? e : new Error(String(e)));
      await this._releaseOwned(spec);
      throw classify(e) || e;
    }
    client.release();
    if (!row || row.token === null) return null;
    return this._granted(spec, null, row, sentAt, signal);
  }

  // The grant on a connection of the lease's own, which waits in
  // fence_lease when the key is held.
  async _takeOwn(spec, signal) {
    // $1 key, $2 ttl, $3 owner, then the wait's timeout (not for a try),
    // then the permits (for a permit).
    const params = [spec.key, cfg.interval(spec.ttlMs), spec.owner];
    if (spec.waitMs !== 0) params.push(spec.waitMs === undefined ? null : cfg.interval(spec.waitMs));
    if (spec.permits !== undefined) params.push(spec.permits);
    let sql;
    if (spec.permits !== undefined) sql = spec.waitMs === 0 ? cfg.SQL.tryPermit : cfg.SQL.permit;
    else sql = spec.waitMs === 0 ? cfg.SQL.tryLease : cfg.SQL.lease;
    const own = await this._connectOwn();
    let abandoned = false;
    const onAbort = () => {
      abandoned = true;
      cancelBackend(this._Client, own);
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    const sentAt = performance.now();
    let row;
    try {
      row = (await own.query(sql, params)).rows[0];
    } catch (e) {
      await endQuietly(own);
      if (abandoned) {
        // A grant may have come just then: give back what this owner holds.
        await this._releaseOwned(spec);
        throw signal.reason;
      }
      if (sqlstateOf(e) === LOCK_NOT_AVAILABLE) throw new LeaseUnavailableError(spec.key, spec.waitMs, { cause: e });
      throw classify(e) || e;
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort);
    }
    if (!row || row.token === null) {
      await endQuietly(own);
      throw new LeaseUnavailableError(spec.key, spec.waitMs);
    }
    return this._granted(spec, own, row, sentAt, signal);
  }

  // A grant made (on `own`, the lease's own connection, or on the pool when
  // own is null): the lease, renewed now if the grant's time is unknown,
  // watched, and started.
  async _granted(spec, own, row, sentAt, signal) {
    const lease = new Lease(this, spec, own, row, sentAt);
    if (signal && signal.aborted) {
      await lease.release();
      throw signal.reason;
    }
    if (performance.now() - sentAt > spec.timing.renewEveryMs) {
      // The grant came after a wait, when is unknown: renew now, to know a
      // deadline that cannot be late.
      const renewedAt = performance.now();
      let r;
      try {
        r = (await (own || this.pool).query(cfg.SQL.renew,
          [spec.key, lease.token.toString(), cfg.interval(spec.ttlMs)])).rows[0];
      } catch (e) {
        await lease.release();
        throw classify(e) || e;
      }
      if (r.ok !== true) {
        const err = new LeaseLostError(spec.key, lease.token, howFromServer(null));
        await lease.release();
        throw err;
      }
      lease._deadline = renewedAt + spec.ttlMs;
      lease.expiresAt = r.expires_at;
    }
    const server = own ? await this._serverHas(own) : this._server;
    if (server && server.multi) {
      // The fence's watchdog watches it: its own connection is done.
      lease._own = null;
      await endQuietly(own);
      if (!this._dog) this._dog = new Watchdog(this, howFromServer);
      lease._dog = this._dog;
    }
    lease._start();
    this.emit('acquired', lease);
    return lease;
  }

  // What the server has, asked once (on conn, the pool or a connection):
  // { multi, forget }, whether it has fence_wait_leases_end and
  // fence_forget_token; null if it could not be asked (asked again with the
  // next lease).
  async _serverHas(conn) {
    if (this._server === undefined) {
      try {
        const r = (await conn.query(cfg.SQL.serverHas)).rows[0];
        this._server = { multi: r.multi === true, forget: r.forget === true };
      } catch {
        return null;
      }
    }
    return this._server;
  }

  // What gives back this owner's grant of a key whose answer was lost:
  // with fence_forget_token (fence 1.3) the statement that reads only that
  // key's leases, else (fence 1.2, or not asked) the one that reads them all.
  _releaseOwnedSql() {
    return this._server && this._server.forget ? cfg.SQL.releaseOwnedOfKey : cfg.SQL.releaseOwned;
  }

  async _releaseOwned(spec) {
    try {
      await withTimeout(this.pool.query(this._releaseOwnedSql(), [spec.key, spec.owner]), 10000, 'the release');
    } catch (e) {
      this.emit('warning', null, new Error(
        `could not check lease "${spec.key}" after an abandoned wait (${e.message})`, { cause: e }));
    }
  }
}

module.exports = { Fence };
