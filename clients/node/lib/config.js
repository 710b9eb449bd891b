'use strict';
// Checking what callers pass, the owner names pgfence makes, the timing of
// renewals, and the SQL it sends.
const crypto = require('node:crypto');
const os = require('node:os');

// fence's limit on an owner name.
const OWNER_MAX_BYTES = 48;

// How long the watchdog's fence_wait_lease_end sleeps before it asks again:
// a return with NULL (still held) also proves that the connection is alive.
const WATCHDOG_POLL_MS = 30000;

function checkMs(value, what) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`${what} must be a positive, finite number of milliseconds, not ${String(value)}`);
  }
  return value;
}

// waitMs: undefined (or Infinity) waits as long as it takes, 0 tries once, a
// number waits that long.
function checkWait(value) {
  if (value === undefined || value === null || value === Infinity) return undefined;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new TypeError(`waitMs must be undefined, 0 or a number of milliseconds, not ${String(value)}`);
  }
  return value;
}

// Keys are text; an integer names the same lease as its decimal text.
function checkKey(key) {
  if (typeof key === 'bigint') return key.toString();
  if (typeof key === 'number' && Number.isSafeInteger(key)) return String(key);
  if (typeof key !== 'string' || key === '') {
    throw new TypeError('key must be a non-empty string or an integer');
  }
  return key;
}

function checkOwner(owner) {
  if (typeof owner !== 'string' || owner === '') throw new TypeError('owner must be a non-empty string');
  if (Buffer.byteLength(owner) > OWNER_MAX_BYTES) {
    throw new TypeError(`owner must be at most ${OWNER_MAX_BYTES} bytes`);
  }
  return owner;
}

function checkPermits(permits) {
  if (!Number.isSafeInteger(permits) || permits < 1 || permits > 2147483647) {
    throw new TypeError('permits must be a positive integer');
  }
  return permits;
}

// A name no other process uses: host, pid and 48 random bits, within 48
// bytes.
function generatedOwner() {
  const tail = `:${process.pid}:${crypto.randomBytes(6).toString('hex')}`;
  let head = `pgfence:${os.hostname().split('.')[0] || 'host'}`;
  while (Buffer.byteLength(head + tail) > OWNER_MAX_BYTES) head = head.slice(0, -1);
  return head + tail;
}

// An interval PostgreSQL reads exactly.
function interval(ms) {
  return `${ms} milliseconds`;
}

// When to renew and how long each try may take, for one TTL.
class Timing {
  constructor(ttlMs, renewTimeoutMs) {
    this.ttlMs = ttlMs;
    this.renewEveryMs = ttlMs / 3;
    this.tryTimeoutMs = renewTimeoutMs !== undefined ? renewTimeoutMs : Math.max(this.renewEveryMs, 50);
    this.retryEveryMs = Math.max(Math.min(ttlMs / 10, 1000), 20);
  }

  // A third of the TTL, less up to 20% of jitter.
  nextRenewal() {
    return this.renewEveryMs * (0.8 + 0.2 * Math.random());
  }

  nextRetry() {
    return this.retryEveryMs * (0.5 + 0.5 * Math.random());
  }
}

// The SQL.  Keys travel as text and tokens as bigint (fence_token has an
// implicit cast from int8; ::bigint reads one back as a decimal string).  A
// grant also returns its expiry by the lease clock and the server's start
// time (a restart ends every lease: the watchdog compares it after a
// reconnect).
const GRANTED = 'SELECT t::bigint AS token, fence_now() + $2::interval AS expires_at, '
  + 'pg_postmaster_start_time() AS started FROM ';
const SQL = {
  tryLease: `${GRANTED}fence_try_lease($1::text, $2::interval, owner => $3::text) AS t`,
  lease: `${GRANTED}fence_lease($1::text, $2::interval, $4::interval, owner => $3::text) AS t`,
  tryPermit: `${GRANTED}fence_try_permit($1::text, $4::int4, $2::interval, owner => $3::text) AS t`,
  permit: `${GRANTED}fence_permit($1::text, $5::int4, $2::interval, $4::interval, owner => $3::text) AS t`,
  // A lease's own connection waits, for the grant (fence_lease's own
  // timeout bounds that) and then in the watchdog: no timeout of the
  // pool's configuration or the role's may cut those waits short.
  ownSession: 'SET statement_timeout = 0; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0',
  renew: 'SELECT fence_renew($1::text, $2::bigint, $3::interval) AS ok, fence_now() + $3::interval AS expires_at',
  release: 'SELECT fence_release($1::text, $2::bigint) AS released',
  status: 'SELECT fence_lease_status($1::text, $2::bigint) AS status, pg_postmaster_start_time() AS started',
  waitEnd: 'SELECT fence_wait_lease_end($1::text, $2::bigint, $3::interval) AS how',
  // A grant on a pooled connection, in one statement that also makes the
  // session forget it (fence_forget_token), so that the connection goes
  // back to the pool carrying no token (fence 1.3 and later).
  poolTryLease: `${GRANTED}fence_forget_token($1::text, `
    + 'fence_try_lease($1::text, $2::interval, owner => $3::text)) AS t',
  poolTryPermit: `${GRANTED}fence_forget_token($1::text, `
    + 'fence_try_permit($1::text, $4::int4, $2::interval, owner => $3::text)) AS t',
  // What the server has, asked once per Fence: one watchdog for all the
  // leases (fence_wait_leases_end) and the grant on the pool
  // (fence_forget_token), both of fence 1.3.  fence_forget_token has a text
  // and a bigint form, and to_regproc finds no function for an overloaded
  // name: it is named with its arguments.
  serverHas: "SELECT to_regproc('fence_wait_leases_end') IS NOT NULL AS multi, "
    + "to_regprocedure('fence_forget_token(text, fence_token)') IS NOT NULL AS forget",
  waitLeasesEnd: 'SELECT key, token::bigint AS token, status '
    + 'FROM fence_wait_leases_end($1::text[], $2::bigint[], $3::interval)',
  serverStarted: 'SELECT pg_postmaster_start_time() AS started',
  useToken: 'SELECT fence_use_token($1::bigint, $2::text)',
  // What this owner holds of the key after a grant whose answer was lost
  // (a wait abandoned, a connection broken: a grant may have come just
  // then): released by its token.  fence_leases_of (fence 1.3, as
  // fence_forget_token is) reads that key's leases only; fence_leases, for
  // a server of fence 1.2, reads every lease of the server.
  releaseOwnedOfKey: 'SELECT fence_release(l.key, l.token) FROM fence_leases_of($1::text) l '
    + 'WHERE l.owner = $2::text',
  releaseOwned: 'SELECT fence_release(l.key, l.token) FROM fence_leases l '
    + 'WHERE l.database = current_database() AND l.key = $1::text AND l.owner = $2::text',
};

module.exports = {
  OWNER_MAX_BYTES,
  WATCHDOG_POLL_MS,
  checkMs,
  checkWait,
  checkKey,
  checkOwner,
  checkPermits,
  generatedOwner,
  interval,
  Timing,
  SQL,
};
