'use strict';
// The errors pgfence throws, and classify(), which maps a driver's error to
// one.  Every error is a FenceError; when a database error is the reason, it
// is kept as `cause` (its `code` is the SQLSTATE, as node-postgres has it).

// fence's own SQLSTATEs (class LF), and PostgreSQL's "lock not available",
// which fence_lease raises when its timeout passes.
const STALE_TOKEN = 'LF001';
const LEASE_NOT_HELD = 'LF002';
const TOKEN_REQUIRED = 'LF003';
const LOCK_NOT_AVAILABLE = '55P03';
const QUERY_CANCELED = '57014';

// How a lease was lost (LeaseLostError.how).
const HOWS = Object.freeze([
  'expired', // its expiry passed on the server
  'superseded', // another holder took it over
  'released', // released by this process (the end of withLease, release())
  'broken', // ended by someone else: fence_break, or a release with its token
  'connection', // the server restarted: every lease ended with it
  'deadline', // no renewal succeeded before the local deadline
]);

class FenceError extends Error {
  constructor(message, options) {
    super(message, options && options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = this.constructor.name;
    const code = sqlstateOf(options && options.cause);
    this.sqlstate = code || this.constructor.sqlstate || undefined;
  }
}

class StaleTokenError extends FenceError {}
StaleTokenError.sqlstate = STALE_TOKEN;

class LeaseNotHeldError extends FenceError {}
LeaseNotHeldError.sqlstate = LEASE_NOT_HELD;

class TokenRequiredError extends FenceError {}
TokenRequiredError.sqlstate = TOKEN_REQUIRED;

class LeaseUnavailableError extends FenceError {
  constructor(key, waitMs, options) {
    super(waitMs === 0
      ? `lease "${key}" is held by another owner`
      : `lease "${key}" was not granted within ${waitMs} ms`, options);
    this.key = key;
    this.waitMs = waitMs;
  }
}

class LeaseLostError extends FenceError {
  constructor(key, token, how, options) {
    super(`lease "${key}" (token ${token}) was lost: ${how}`, options);
    this.key = key;
    this.token = token;
    this.how = how;
  }
}

function sqlstateOf(err) {
  if (err === null || typeof err !== 'object') return undefined;
  const code = err.sqlstate || err.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function firstLine(err) {
  const text = String((err && err.message) || '').trim().split('\n')[0];
  return text || (err && err.constructor && err.constructor.name) || 'error';
}

const BY_SQLSTATE = {
  [STALE_TOKEN]: StaleTokenError,
  [LEASE_NOT_HELD]: LeaseNotHeldError,
  [TOKEN_REQUIRED]: TokenRequiredError,
};

// The FenceError a driver's error means (by its SQLSTATE: `code` in
// node-postgres and postgres.js, or `sqlstate`), or null.  A FenceError is
// returned as it is.
function classify(err) {
  if (err instanceof FenceError) return err;
  const Cls = BY_SQLSTATE[sqlstateOf(err)];
  return Cls ? new Cls(firstLine(err), { cause: err }) : null;
}

module.exports = {
  FenceError,
  StaleTokenError,
  LeaseNotHeldError,
  TokenRequiredError,
  LeaseUnavailableError,
  LeaseLostError,
  classify,
  sqlstateOf,
  HOWS,
  LOCK_NOT_AVAILABLE,
  QUERY_CANCELED,
};
