'use strict';
// One watchdog for every lease of a Fence, when the server has
// fence_wait_leases_end (fence 1.3): one connection sleeps in one call on the
// whole set, and the server answers the moment any lease of it ends.
//
// A lease taken joins the set; the call running then does not watch it, so
// the watchdog cancels that call (PostgreSQL's cancel request) and calls
// again with the new set: the new lease is watched within a round trip,
// not after a poll.  A cancel request that reaches the server before the call
// starts cancels nothing, so it is sent again while that call still runs.
// A lease that leaves the set needs no cancel: its release ends the running
// call by itself, with a row the watchdog ignores.  When no lease is left,
// the connection is closed (nothing keeps the process alive).  On a server
// without the function (fence 1.2), each lease watches itself on a
// connection of its own, as before.
const { setTimeout: sleep } = require('node:timers/promises');
const { SQL, interval } = require('./config');
const { sqlstateOf, QUERY_CANCELED } = require('./errors');
const { endQuietly, cancelBackend } = require('./pg');

// fence_wait_leases_end watches at most this many leases in one call; the
// others rely on their renewals.
const MAX_WATCHED = 10000;
// Pauses (ms) between cancel requests for one call that goes on.
const CANCEL_RETRIES_MS = [50, 100, 200, 500, 1000, 2000, 5000];

class Watchdog {
  constructor(fence, howFromServer) {
    this._fence = fence;
    this._howFromServer = howFromServer;
    this._leases = new Set();
    this._added = 0; // leases added so far
    this._issued = -1; // the _added the running call watches, or -1
    this._calls = 0;
    this._cancelSent = false;
    this._conn = null;
    this._running = null;
  }

  add(lease) {
    this._leases.add(lease);
    this._added += 1;
    if (!this._running) {
      this._running = this._run()
        .catch((e) => this._fence.emit('warning', null, new Error(`the watchdog failed: ${e.message}`, { cause: e })))
        .finally(() => {
          this._running = null;
          // A lease added while the last call ended.
          if (this._leases.size) this.add(this._leases.values().next().value);
        });
    } else if (this._issued >= 0 && !this._cancelSent && this._conn) {
      this._cancelSent = true;
      this._cancelCall(this._conn, this._calls);
    }
  }

  remove(lease) {
    this._leases.delete(lease);
  }

  // Does call number `calls` still run, though a lease was added since?
  _stale(calls) {
    return this._calls === calls && this._issued >= 0 && this._issued !== this._added;
  }

  async _cancelCall(conn, calls) {
    for (const pause of CANCEL_RETRIES_MS) {
      await cancelBackend(this._fence._Client, conn);
      await sleep(pause);
      if (!this._stale(calls)) return;
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
        this._cancelSent = false;
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

module.exports = { Watchdog, MAX_WATCHED };
