'use strict';
// pgfence/testing: fence's virtual lease clock, for tests.  On a server
// started with fence.test_clock = on, a superuser moves one clock for the
// whole server (fence_set_clock, fence_advance_clock); every lease decision
// reads it, so a test expires a lease without waiting, and a lease's
// watchdog learns of it at once.  Timeouts stay in real time.
const { interval } = require('./lib/config');

class VirtualClock {
  // queryable: a pg.Client or pg.Pool of a superuser.
  constructor(queryable) {
    this.db = queryable;
  }

  async _one(text, values) {
    return (await this.db.query(text, values)).rows[0].v;
  }

  // The lease clock now (a Date).
  now() {
    return this._one('SELECT fence_now() AS v');
  }

  // Put the clock at `when` (a Date); null goes back to real time.
  set(when) {
    return this._one('SELECT fence_set_clock($1::timestamptz) AS v', [when]);
  }

  // Stop the clock where it is.
  freeze() {
    return this._one('SELECT fence_set_clock(fence_now()) AS v');
  }

  // Move the clock forward by ms (stopping it there if it ran in real time).
  advance(ms) {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
      throw new TypeError('advance(ms) takes a number of milliseconds, at least 0');
    }
    return this._one('SELECT fence_advance_clock($1::interval) AS v', [interval(ms)]);
  }

  // Back to real time.
  async real() {
    await this.set(null);
  }
}

module.exports = { VirtualClock };
