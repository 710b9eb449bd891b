'use strict';
// Shared circuit breakers: fence_breaker_allow before a call to a
// dependency, fence_breaker_report after it (with the probe's token when
// the breaker let this call probe).
const { performance } = require('node:perf_hooks');
const { FenceError } = require('./errors');
const { interval } = require('./config');

class BreakerOpenError extends FenceError {
  constructor(name, retryAt) {
    super(`circuit breaker "${name}" is open; retry at ${retryAt ? retryAt.toISOString() : 'an unknown time'}`);
    this.breaker = name;
    this.retryAt = retryAt;
  }
}

// fence_breaker_allow's options, by their JavaScript names; durations in
// milliseconds.
const OPTIONS = {
  failureThreshold: ['failure_threshold', 'int4'],
  failureRate: ['failure_rate', 'float8'],
  windowSize: ['window_size', 'int4'],
  openForMs: ['open_for', 'interval'],
  maxOpenForMs: ['max_open_for', 'interval'],
  probeTtlMs: ['probe_ttl', 'interval'],
};

function allowSql(options) {
  const values = [];
  let named = '';
  for (const [name, value] of Object.entries(options)) {
    const spec = OPTIONS[name];
    if (!spec) throw new TypeError(`unknown breaker option: ${name}`);
    if (value === undefined) continue;
    values.push(spec[1] === 'interval' ? interval(value) : value);
    named += `, ${spec[0]} => $${values.length + 1}::${spec[1]}`;
  }
  return {
    text: `SELECT decision, probe_token::bigint AS probe_token, retry_at FROM fence_breaker_allow($1::text${named})`,
    values,
  };
}

class Breaker {
  constructor(pool, name) {
    if (typeof name !== 'string' || name === '') throw new TypeError('a breaker name is a non-empty string');
    this.pool = pool;
    this.name = name;
  }

  // { decision: 'call' | 'probe' | 'fail_fast', probeToken, retryAt }.
  async allow(options = {}) {
    const { text, values } = allowSql(options);
    const row = (await this.pool.query(text, [this.name, ...values])).rows[0];
    return {
      decision: row.decision,
      probeToken: row.probe_token === null ? null : BigInt(row.probe_token),
      retryAt: row.retry_at,
    };
  }

  // Report a call's outcome; resolves to the breaker's state after it.
  async report(success, probeToken = null, durationMs = null) {
    const r = await this.pool.query(
      'SELECT fence_breaker_report($1::text, $2::bool, $3::bigint, $4::interval) AS state',
      [this.name, success === true, probeToken === null ? null : probeToken.toString(),
        durationMs === null ? null : interval(durationMs)]);
    return r.rows[0].state;
  }

  // allow(), then fn(decision); reports its success or failure (a throw)
  // with its duration.  BreakerOpenError when the breaker says fail_fast.
  async call(options, fn) {
    if (typeof options === 'function') [options, fn] = [{}, options];
    const d = await this.allow(options);
    if (d.decision === 'fail_fast') throw new BreakerOpenError(this.name, d.retryAt);
    const start = performance.now();
    let result;
    try {
      result = await fn(d);
    } catch (e) {
      await this.report(false, d.probeToken, performance.now() - start);
      throw e;
    }
    await this.report(true, d.probeToken, performance.now() - start);
    return result;
  }
}

module.exports = { Breaker, BreakerOpenError };
