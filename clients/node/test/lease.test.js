'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { setTimeout: sleep } = require('node:timers/promises');
const {
  Fence, FenceError, LeaseLostError, LeaseUnavailableError, StaleTokenError, LeaseNotHeldError,
  TokenRequiredError, BreakerOpenError, classify,
} = require('pgfence');
const { VirtualClock } = require('pgfence/testing');
const { newPool, uniqueKey, protectedTable, status, aborted } = require('./helpers');

let pool;
let admin;
test.before(async () => {
  pool = newPool();
  admin = newPool(2);
});
test.after(async () => {
  await pool.end();
  await admin.end();
});

test('a lease has a bigint token, a key and an expiry, and is released by its token', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('basic');
  const lease = await fx.acquire(key, { ttlMs: 5000 });
  assert.equal(typeof lease.token, 'bigint');
  assert.equal(lease.key, key);
  assert.ok(lease.expiresAt instanceof Date);
  assert.match(lease.owner, /^pgfence:/);
  assert.equal(await status(admin, key, lease.token), 'held');
  const owner = (await admin.query('SELECT owner, scope FROM fence_leases WHERE key = $1', [key])).rows[0];
  assert.deepEqual(owner, { owner: lease.owner, scope: 'detached' });
  assert.equal(await lease.release(), true);
  assert.equal(await lease.release(), true, 'release() is idempotent');
  assert.equal(await status(admin, key, lease.token), 'released');
  assert.equal(lease.signal.aborted, true);
  assert.ok(lease.signal.reason instanceof LeaseLostError);
  assert.equal(lease.signal.reason.how, 'released');
  assert.throws(() => lease.check(), LeaseLostError);
});

test('an integer key names the same lease as its decimal text', async () => {
  const fx = new Fence(pool);
  const n = 900000 + Math.floor(Math.random() * 90000);
  const lease = await fx.acquire(n, { ttlMs: 5000 });
  assert.equal(lease.key, String(n));
  await assert.rejects(fx.acquire(String(n), { waitMs: 0 }), LeaseUnavailableError);
  await lease.release();
});

test('waitMs: 0 tries once, a number waits that long, undefined waits until granted', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('wait');
  const first = await fx.acquire(key, { ttlMs: 10000 });
  await assert.rejects(fx.acquire(key, { waitMs: 0 }), (e) => e instanceof LeaseUnavailableError
    && e instanceof FenceError && e.waitMs === 0 && e.key === key);
  const t0 = Date.now();
  await assert.rejects(fx.acquire(key, { waitMs: 300 }), (e) => e instanceof LeaseUnavailableError
    && e.cause && e.cause.code === '55P03');
  assert.ok(Date.now() - t0 >= 250);
  const waiting = fx.acquire(key, { ttlMs: 5000 });
  await sleep(300);
  await first.release();
  const second = await waiting;
  assert.ok(second.token > first.token);
  await second.release();
});

test('an abandoned wait leaves no lease behind', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('abandon');
  const first = await fx.acquire(key, { ttlMs: 10000 });
  const ac = new AbortController();
  const waiting = fx.acquire(key, { signal: ac.signal });
  await sleep(300);
  ac.abort(new Error('given up'));
  await assert.rejects(waiting, /given up/);
  await first.release();
  const n = (await admin.query('SELECT count(*)::int AS n FROM fence_leases WHERE key = $1', [key])).rows[0].n;
  assert.equal(n, 0);
});

test('bad arguments are refused before anything is sent', async () => {
  const fx = new Fence(pool);
  await assert.rejects(fx.acquire('', {}), TypeError);
  await assert.rejects(fx.acquire('k', { ttlMs: 0 }), TypeError);
  await assert.rejects(fx.acquire('k', { waitMs: -1 }), TypeError);
  await assert.rejects(fx.acquire('k', { owner: 'x'.repeat(49) }), TypeError);
  assert.throws(() => new Fence({}), TypeError);
});

test('lease.transaction() carries the token, and the pooled client carries none after', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('tx');
  await protectedTable(admin, 'node_tx');
  await fx.withLease(key, { ttlMs: 3000 }, async (lease) => {
    const seen = await lease.transaction(async (client) => {
      await client.query("UPDATE node_tx SET result = 'by the lease' WHERE id = 1");
      return (await client.query('SELECT fence_current_token($1)::bigint AS t', [key])).rows[0].t;
    });
    assert.equal(BigInt(seen), lease.token);
    // Every client of the pool, after the transaction and renewals: no token.
    await sleep(1200);
    const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect(), pool.connect()]);
    try {
      for (const c of clients) {
        const r = await c.query('SELECT fence_current_token() AS t, fence_current_token($1) AS k', [key]);
        assert.deepEqual(r.rows[0], { t: null, k: null });
      }
    } finally {
      clients.forEach((c) => c.release());
    }
  });
  const row = (await admin.query('SELECT result, fence::bigint AS f FROM node_tx')).rows[0];
  assert.equal(row.result, 'by the lease');
});

test('a transaction rolls back when its function throws', async () => {
  const fx = new Fence(pool);
  await protectedTable(admin, 'node_rb');
  await fx.withLease(uniqueKey('rb'), { ttlMs: 5000 }, async (lease) => {
    await assert.rejects(lease.transaction(async (c) => {
      await c.query("UPDATE node_rb SET result = 'no' WHERE id = 1");
      throw new Error('boom');
    }), /boom/);
  });
  assert.equal((await admin.query('SELECT result FROM node_rb')).rows[0].result, 'pending');
});

test('classify() maps fence\'s SQLSTATEs to classes, with the driver error as cause', async () => {
  const e = await admin.query("SELECT fence_assert_current('nobody-holds-this', 1)").then(() => null, (err) => err);
  const fe = classify(e);
  assert.ok(fe instanceof LeaseNotHeldError && fe instanceof FenceError);
  assert.equal(fe.sqlstate, 'LF002');
  assert.equal(fe.cause, e);
  assert.equal(classify(new Error('plain')), null);
  assert.equal(classify(null), null);
  assert.ok(classify({ code: 'LF001', message: 'x' }) instanceof StaleTokenError);
  assert.ok(classify({ code: 'LF003', message: 'x' }) instanceof TokenRequiredError);
  assert.equal(classify(fe), fe);
});

test('a stale write through the lease is StaleTokenError, LF002 marks the lease lost', async () => {
  await protectedTable(admin, 'node_stale');
  const fx = new Fence(pool);
  const key = uniqueKey('stale');
  await assert.rejects(fx.withLease(key, { ttlMs: 5000 }, async (lease) => {
    // A newer token has written the row (another holder, another key).
    const newer = await admin.query("SELECT fence_try_lease($1, '5 s', owner => 'other')::bigint AS t", [`${key}:x`]);
    await admin.query('UPDATE node_stale SET fence = $1 WHERE id = 1', [newer.rows[0].t]);
    await assert.rejects(lease.transaction((c) => c.query("UPDATE node_stale SET result = 'late' WHERE id = 1")),
      (e) => e instanceof StaleTokenError && e.cause.code === 'LF001');
    assert.equal(lease.lost, false);
    await admin.query('SELECT fence_break($1)', [key]);
    await assert.rejects(lease.transaction((c) => c.query('SELECT fence_assert_current($1, $2::bigint)',
      [key, lease.token.toString()])), (e) => e instanceof LeaseNotHeldError || e instanceof LeaseLostError);
    assert.equal(lease.lost, true);
  }), LeaseLostError);
});

test('renewal keeps a 1 s lease through 4 s of work', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('renew');
  let renewals = 0;
  fx.on('renewed', (l) => { if (l.key === key) renewals += 1; });
  const result = await fx.withLease(key, { ttlMs: 1000 }, async (lease, signal) => {
    for (let i = 0; i < 8; i += 1) {
      await sleep(500, undefined, { signal });
      assert.equal(await status(admin, key, lease.token), 'held');
    }
    return 'done';
  });
  assert.equal(result, 'done');
  assert.ok(renewals >= 8, `renewed ${renewals} times`);
});

test('fence_break aborts the signal within a second, and withLease rejects', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('break');
  const events = [];
  fx.on('lost', (l, e) => events.push(e.how));
  let took;
  await assert.rejects(fx.withLease(key, { ttlMs: 30000 }, async (lease, signal) => {
    const broken = (await admin.query('SELECT fence_break($1)::bigint AS t', [key])).rows[0].t;
    assert.equal(BigInt(broken), lease.token);
    took = await aborted(signal, 1000);
    assert.equal(signal.reason.how, 'broken');
    await sleep(60000, undefined, { signal }); // throws AbortError
  }), (e) => e instanceof LeaseLostError && e.how === 'broken');
  assert.ok(took < 1000);
  assert.deepEqual(events, ['broken']);
});

test('withLease rejects with LeaseLostError when the lease ended before the callback did', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('ended');
  await assert.rejects(fx.withLease(key, { ttlMs: 30000 }, async (lease, signal) => {
    await admin.query('SELECT fence_break($1)', [key]);
    await aborted(signal, 2000);
    return 'finished anyway';
  }), (e) => e instanceof LeaseLostError && e.how === 'broken');
});

test('the lease is released when the callback throws', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('throws');
  let token;
  await assert.rejects(fx.withLease(key, { ttlMs: 30000 }, async (lease) => {
    token = lease.token;
    throw new Error('the job failed');
  }), /the job failed/);
  assert.equal(await status(admin, key, token), 'released');
});

test('a statement running when the lease is lost is cancelled', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('cancel');
  const t0 = Date.now();
  await assert.rejects(fx.withLease(key, { ttlMs: 30000 }, async (lease) => {
    setTimeout(() => admin.query('SELECT fence_break($1)', [key]), 300);
    await lease.transaction((c) => c.query('SELECT pg_sleep(30)'));
  }), (e) => e instanceof LeaseLostError && e.cause && e.cause.code === '57014');
  assert.ok(Date.now() - t0 < 5000, 'cancelled in time');
  // The pool still works, and its clients are idle.
  assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
});

test('events: acquired, renewed, released', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('events');
  const seen = [];
  for (const ev of ['acquired', 'renewed', 'suspended', 'lost', 'released']) {
    fx.on(ev, (l, extra) => { if (l && l.key === key) seen.push(ev === 'released' ? `${ev}:${extra.held}` : ev); });
  }
  await fx.withLease(key, { ttlMs: 600 }, () => sleep(500));
  assert.equal(seen[0], 'acquired');
  assert.ok(seen.includes('renewed'));
  assert.equal(seen[seen.length - 1], 'released:true');
});

// A pool whose queries fail as a dropped network does while `down` is set.
function flakyPool(real) {
  const state = { down: false };
  const fake = {
    options: real.options,
    Client: real.Client,
    connect: (...a) => real.connect(...a),
    query: (...a) => {
      if (state.down) {
        const e = new Error('connect ECONNREFUSED');
        e.code = 'ECONNREFUSED';
        return Promise.reject(e);
      }
      return real.query(...a);
    },
  };
  return { fake, state };
}

test('a network error while renewing suspends the lease, a renewal ends the suspension', async () => {
  const { fake, state } = flakyPool(pool);
  const fx = new Fence(fake);
  const key = uniqueKey('suspend');
  const seen = [];
  fx.on('suspended', (l) => seen.push('suspended'));
  fx.on('renewed', (l) => { if (l.suspended === false && seen.at(-1) === 'suspended') seen.push('renewed'); });
  await fx.withLease(key, { ttlMs: 1500 }, async (lease) => {
    state.down = true;
    await sleep(800);
    assert.equal(lease.suspended, true);
    assert.equal(lease.lost, false);
    state.down = false;
    await sleep(600);
    assert.equal(lease.suspended, false);
    assert.equal(lease.lost, false);
  });
  assert.deepEqual(seen, ['suspended', 'renewed']);
});

test('a suspension past the local deadline loses the lease (deadline)', async () => {
  const { fake, state } = flakyPool(pool);
  const fx = new Fence(fake);
  const key = uniqueKey('deadline');
  const t0 = performance.now();
  let lostAfter;
  await assert.rejects(fx.withLease(key, { ttlMs: 1000 }, async (lease, signal) => {
    state.down = true;
    await aborted(signal, 3000);
    lostAfter = performance.now() - t0;
    state.down = false;
  }), (e) => e instanceof LeaseLostError && (e.how === 'deadline' || e.how === 'expired'));
  assert.ok(lostAfter <= 1800, `lost after ${lostAfter} ms`); // TTL 1000, and timers run late under load
});

test('the virtual clock expires a lease, and the watchdog learns it at once', async () => {
  const fx = new Fence(pool);
  const clock = new VirtualClock(admin);
  const key = uniqueKey('clock');
  try {
    await clock.freeze();
    await assert.rejects(fx.withLease(key, { ttlMs: 30000 }, async (lease, signal) => {
      const before = await clock.now();
      const after = await clock.advance(31000);
      assert.ok(after - before >= 31000);
      await aborted(signal, 1000);
      assert.equal(signal.reason.how, 'expired');
    }), (e) => e instanceof LeaseLostError && e.how === 'expired');
  } finally {
    await clock.real();
  }
});

test('permits: at most n holders, each with a token of its own', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('permit');
  const a = await fx.acquirePermit(key, 2, { ttlMs: 5000 });
  const b = await fx.acquirePermit(key, 2, { ttlMs: 5000 });
  assert.notEqual(a.token, b.token);
  await assert.rejects(fx.acquirePermit(key, 2, { waitMs: 0 }), LeaseUnavailableError);
  const r = await fx.withPermit(key, 2, { ttlMs: 5000, waitMs: 5000 }, async (p) => {
    assert.equal(p.permits, 2);
    return p.token;
  }).catch((e) => e);
  assert.ok(r instanceof LeaseUnavailableError);
  await a.release();
  const t = await fx.withPermit(key, 2, { ttlMs: 5000, waitMs: 0 }, async (p) => p.token);
  assert.ok(t > b.token);
  await b.release();
});

test('breakers: a failing call opens the breaker, which then fails fast', async () => {
  const fx = new Fence(pool);
  const name = uniqueKey('breaker');
  const opts = { failureThreshold: 2, windowSize: 2, openForMs: 60000 };
  assert.equal(await fx.withBreaker(name, opts, async (d) => d.decision), 'call');
  let failures = 0;
  let open;
  while (!open && failures < 5) {
    const e = await fx.withBreaker(name, opts, async () => { throw new Error('down'); }).catch((err) => err);
    if (e instanceof BreakerOpenError) open = e;
    else {
      assert.match(e.message, /down/);
      failures += 1;
    }
  }
  assert.ok(open, 'the breaker opened');
  assert.ok(failures >= 1 && failures <= 2, `opened after ${failures} failures`);
  assert.ok(open.retryAt instanceof Date);
  let called = false;
  await assert.rejects(fx.withBreaker(name, opts, async () => { called = true; }), BreakerOpenError);
  assert.equal(called, false);
});

// Is the backend `pid` waiting in fence_wait_lease_end or
// fence_wait_leases_end?  (The test reads which backend is the watchdog
// from the fence's watchdog, or with fence 1.2 the lease's own connection.)
async function waitsForEnd(pid) {
  if (!pid) return false;
  const r = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 "
    + "AND query LIKE '%fence\\_wait\\_lease%\\_end(%' AND state = 'active'", [pid]);
  return r.rows[0].n === 1;
}

// The backend pid of the fence's watchdog connection, or null.
function watchdogPid(fx) {
  const conn = fx._dog && fx._dog._conn;
  return conn ? conn.processID : null;
}

// Break the lease as an administrator does; resolves, with how long that
// took, once its signal says so, which must be within a second.
async function breakIt(lease) {
  await admin.query('SELECT fence_break($1)', [lease.key]);
  const took = await aborted(lease.signal, 1000);
  assert.equal(lease.how, 'broken');
  return took;
}

async function eventually(what, cond, ms = 3000) {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

test('a watchdog whose connection is killed reconnects, and the lease stays held', async () => {
  const fx = new Fence(pool);
  const key = uniqueKey('watchdog');
  await assert.rejects(fx.withLease(key, { ttlMs: 3000 }, async (lease, signal) => {
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    const first = watchdogPid(fx);
    await admin.query('SELECT pg_terminate_backend($1)', [first]);
    await eventually('a new watchdog waits', async () => watchdogPid(fx) !== first
      && waitsForEnd(watchdogPid(fx)));
    assert.equal(signal.aborted, false);
    assert.equal(await status(admin, key, lease.token), 'held');
    // It still pushes the end of the lease.
    await admin.query('SELECT fence_break($1)', [key]);
    await aborted(signal, 1000);
    assert.equal(signal.reason.how, 'broken');
  }), (e) => e instanceof LeaseLostError && e.how === 'broken');
});

test('a statement_timeout in the pool\'s configuration cuts neither the wait nor the watchdog short', async () => {
  const strict = newPool(2);
  strict.options.statement_timeout = 100;
  strict.options.idle_in_transaction_session_timeout = 100;
  const fx = new Fence(strict);
  const key = uniqueKey('timeouts');
  try {
    const first = await fx.acquire(key, { ttlMs: 5000 });
    const waiting = fx.acquire(key, { ttlMs: 5000 });
    await sleep(800); // past the statement_timeout, still waiting
    await first.release();
    const second = await waiting;
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    const pid = watchdogPid(fx);
    await sleep(2000);
    assert.equal(watchdogPid(fx), pid, 'the same watchdog connection');
    assert.ok(await waitsForEnd(pid), 'it waits on');
    const since = (await admin.query("SELECT now() - query_start > interval '1.5 seconds' AS long "
      + 'FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0];
    assert.equal(since.long, true, 'one wait all along, not one cut short by the timeout');
    await breakIt(second);
    await second.release();
  } finally {
    await strict.end();
  }
});

test('twenty leases of one Fence share one watchdog backend, and a break of any is pushed within a second', async () => {
  const app = `pgfence-test-${process.pid}-${Date.now()}`;
  const own = newPool(4);
  own.options.application_name = app;
  const fx = new Fence(own);
  const base = uniqueKey('twenty');
  const leases = [];
  try {
    for (let i = 0; i < 20; i += 1) leases.push(await fx.acquire(`${base}:${i}`, { ttlMs: 30000 }));
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    const waits = async () => (await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity "
      + "WHERE application_name = $1 AND state = 'active' AND query LIKE '%fence\\_wait\\_lease%'", [app])).rows[0].n;
    // (Each lease added cancels the running call, which is asked again.)
    await eventually('one backend waits for all twenty', async () => (await waits()) === 1);
    // The pool's and the watchdog's, nothing per lease (a grant's own
    // connection is closed once the lease is watched).
    const backends = async () => (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity '
      + 'WHERE application_name = $1', [app])).rows[0].n;
    await eventually('at most 4 + 1 backends', async () => (await backends()) <= 4 + 1);
    const pid = watchdogPid(fx);
    for (const i of [13, 19, 0]) {
      await admin.query('SELECT fence_break($1)', [leases[i].key]);
      const took = await aborted(leases[i].signal, 1000);
      assert.ok(took < 1000, `noticed in ${took} ms`);
      assert.equal(leases[i].how, 'broken');
    }
    assert.deepEqual(leases.map((l, i) => (l.lost ? i : -1)).filter((i) => i >= 0), [0, 13, 19]);
    await eventually('the wait goes on with the others', async () => (await waits()) === 1);
    assert.equal(watchdogPid(fx), pid, 'on the same backend');
  } finally {
    await Promise.all(leases.map((l) => l.release()));
    await eventually('the watchdog connection closes with the last lease', () => fx._dog._conn === null);
    await own.end();
  }
  assert.equal((await admin.query('SELECT count(*)::int AS n FROM fence_leases WHERE key LIKE $1',
    [`${base}:%`])).rows[0].n, 0);
});

test('a lease taken while the watchdog sleeps on others is watched at once', async () => {
  const fx = new Fence(pool);
  const first = await fx.acquire(uniqueKey('first'), { ttlMs: 30000 });
  try {
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    const key = uniqueKey('later');
    const lease = await fx.acquire(key, { ttlMs: 30000 });
    await breakIt(lease);
    await lease.release();
  } finally {
    await first.release();
  }
});

test('without fence_wait_leases_end (fence 1.2) each lease watches itself', async () => {
  const fx = new Fence(pool);
  fx._server = { multi: false, forget: false }; // as a server without the functions answers
  const a = await fx.acquire(uniqueKey('a'), { ttlMs: 30000 });
  const b = await fx.acquire(uniqueKey('b'), { ttlMs: 30000 });
  try {
    assert.equal(fx._dog, null);
    await eventually('both watch', async () => (await waitsForEnd(a._own && a._own.processID))
      && waitsForEnd(b._own && b._own.processID));
    await admin.query('SELECT fence_break($1)', [b.key]);
    await aborted(b.signal, 1000);
    assert.equal(a.lost, false);
  } finally {
    await a.release();
    await b.release();
  }
});

// -- the grant on the pool (fence 1.3) ---------------------------------------

// How long a lease is held before the watchdog watches it (lib/watchdog.js).
const JOIN_AFTER_MS = 100;

// A Client class for a Fence that counts what the fence makes of it: its
// own connections (a grant's, the watchdog's) and its cancel requests, all
// in made.n; made.grants() counts the connections that asked for a lease.
function countingClient(base) {
  const clients = [];
  const made = {
    n: 0,
    grants: () => clients.filter((c) => c.testRan.some((q) => /fence_(try_)?(lease|permit)\(/.test(q))).length,
  };
  class Counted extends base {
    constructor(...args) {
      super(...args);
      this.testRan = [];
      clients.push(this);
      made.n += 1;
    }

    query(q, ...rest) {
      this.testRan.push(typeof q === 'string' ? q : String(q && q.text));
      return super.query(q, ...rest);
    }
  }
  return { Client: Counted, made };
}

// A pool of `max` connections, all open, named `app`, and a Fence on it
// whose own connections are named `${app}:own` and counted.
async function countedFence(max = 2) {
  const app = `pgfence-pool-${process.pid}-${Math.floor(Math.random() * 1e9)}`;
  const own = newPool(max);
  own.options.application_name = app;
  const warm = await Promise.all(Array.from({ length: max }, () => own.connect()));
  warm.forEach((c) => c.release());
  const { Client, made } = countingClient(own.Client);
  const fx = new Fence(own, { Client, clientConfig: { ...own.options, application_name: `${app}:own` } });
  const backends = async (name = app) => (await admin.query('SELECT coalesce(array_agg(pid ORDER BY pid), '
    + "'{}') AS p FROM pg_stat_activity WHERE application_name = $1", [name])).rows[0].p;
  return { own, fx, made, app, backends };
}

// Every connection of the pool at once (the one that made the grant among
// them): the token each carries, by itself and for key.
async function poolTokens(own, max, key) {
  const clients = await Promise.all(Array.from({ length: max }, () => own.connect()));
  try {
    return await Promise.all(clients.map(async (c) => ({
      pid: c.processID,
      ...(await c.query('SELECT fence_current_token()::bigint AS t, fence_current_token($1)::bigint AS k', [key])).rows[0],
    })));
  } finally {
    clients.forEach((c) => c.release());
  }
}

test('a lease on a free key is one statement on the pool: no connection of its own, no token left there', async () => {
  const { own, fx, made, backends } = await countedFence(2);
  try {
    const pool0 = await backends();
    assert.equal(pool0.length, 2);
    const key = uniqueKey('pooled');
    const lease = await fx.acquire(key, { ttlMs: 30000 });
    assert.equal(made.n, 0, 'the grant made no connection');
    // (From here on, the watchdog may watch the lease, on a connection of
    // its own: the grants are counted apart.)
    assert.equal(await status(admin, key, lease.token), 'held');
    const owner = (await admin.query('SELECT owner, scope FROM fence_leases WHERE key = $1', [key])).rows[0];
    assert.deepEqual(owner, { owner: lease.owner, scope: 'detached' });
    const seen = await poolTokens(own, 2, key);
    assert.deepEqual(seen.map((s) => s.pid).sort(), pool0.map(Number).sort(), 'the pool\'s two connections');
    for (const s of seen) assert.deepEqual({ t: s.t, k: s.k }, { t: null, k: null }, `no token on backend ${s.pid}`);
    assert.deepEqual(await backends(), pool0, 'no backend besides the pool\'s');
    // A permit is taken the same way.
    const permit = await fx.acquirePermit(`${key}:p`, 1, { ttlMs: 30000 });
    assert.equal(made.grants(), 0, 'the permit made no connection');
    for (const s of await poolTokens(own, 2, `${key}:p`)) assert.deepEqual({ t: s.t, k: s.k }, { t: null, k: null });
    // Held keys, tried once: unavailable at once, still no connection.
    await assert.rejects(fx.acquire(key, { waitMs: 0 }), (e) => e instanceof LeaseUnavailableError && e.waitMs === 0);
    await assert.rejects(fx.acquirePermit(`${key}:p`, 1, { waitMs: 0 }), LeaseUnavailableError);
    assert.equal(made.grants(), 0, 'a refused try made no connection');
    // The lease is in effect where it is used.
    await protectedTable(admin, 'node_pooled');
    const written = await lease.transaction(async (c) => (await c.query(
      "UPDATE node_pooled SET result = 'pooled' WHERE id = 1 RETURNING fence::bigint AS f")).rows[0].f);
    assert.equal(BigInt(written), lease.token);
    assert.equal(await lease.release(), true);
    assert.equal(await permit.release(), true);
    assert.equal(await status(admin, key, lease.token), 'released');
  } finally {
    await own.end();
  }
});

test('a lease released within its first 100 ms costs the watchdog nothing', async () => {
  const { own, fx, made } = await countedFence(2);
  const long = await fx.acquire(uniqueKey('long'), { ttlMs: 30000 });
  try {
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    await sleep(300); // the cancel requests of its joining are done
    const pid = watchdogPid(fx);
    const calls = fx._dog._calls;
    const madeBefore = made.n;
    const since = async () => (await admin.query('SELECT query_start FROM pg_stat_activity WHERE pid = $1',
      [pid])).rows[0].query_start.getTime();
    const started = await since();
    // Held for less than 100 ms (else tried again: the machine was slow).
    let shortest = Infinity;
    for (let i = 0; i < 5 && shortest >= JOIN_AFTER_MS; i += 1) {
      const t0 = performance.now();
      const lease = await fx.acquire(uniqueKey('short'), { ttlMs: 30000 });
      await sleep(JOIN_AFTER_MS / 2); // work, for a while
      await lease.release();
      shortest = Math.min(shortest, performance.now() - t0);
    }
    assert.ok(shortest < JOIN_AFTER_MS, `a lease held for less than ${JOIN_AFTER_MS} ms (${shortest} ms)`);
    await sleep(JOIN_AFTER_MS + 200);
    assert.equal(fx._dog._calls, calls, 'the watchdog did not call again');
    assert.equal(made.n, madeBefore, 'no connection, no cancel request');
    assert.equal(watchdogPid(fx), pid);
    assert.equal(await since(), started, 'the same call sleeps on');
  } finally {
    await long.release();
    await own.end();
  }
});

test('a lease broken within its first 100 ms is still signalled lost within a second', async () => {
  const fx = new Fence(pool);
  // Once with no watchdog running, once with one asleep on another lease.
  const other = uniqueKey('other');
  for (const busy of [false, true]) {
    const held = busy ? await fx.acquire(other, { ttlMs: 30000 }) : null;
    try {
      if (busy) await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
      let lease;
      let early = false;
      for (let i = 0; i < 5 && !early; i += 1) {
        if (lease) await lease.release();
        lease = await fx.acquire(uniqueKey('early'), { ttlMs: 30000 });
        await admin.query('SELECT fence_break($1)', [lease.key]);
        // Broken before it joined the watchdog's set (else tried again).
        early = !fx._dog._leases.has(lease) && lease.how === null;
      }
      assert.ok(early, 'broken before the watchdog watched it');
      const took = await aborted(lease.signal, 1000);
      assert.ok(took < 1000, `noticed in ${took} ms`);
      assert.equal(lease.how, 'broken');
      await lease.release();
    } finally {
      if (held) await held.release();
    }
  }
});

test('a lease on a held key waits on a connection of its own and is granted at the release', async () => {
  const { own, fx, made, app, backends } = await countedFence(2);
  const key = uniqueKey('held');
  try {
    const holder = (await admin.query("SELECT fence_try_lease($1, '30 s', owner => 'someone else')::bigint AS t",
      [key])).rows[0].t;
    const t0 = Date.now();
    const waiting = fx.acquire(key, { ttlMs: 30000, waitMs: 10000 });
    const waits = async () => (await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE "
      + "application_name = $1 AND state = 'active' AND query LIKE '%fence\\_lease(%'", [`${app}:own`])).rows[0].n;
    await eventually('a connection of its own waits in fence_lease', async () => (await waits()) === 1);
    assert.equal(made.grants(), 1);
    await sleep(300);
    await admin.query('SELECT fence_release($1, $2::bigint)', [key, holder]);
    const lease = await waiting;
    assert.ok(Date.now() - t0 >= 300, 'it waited');
    assert.ok(lease.token > BigInt(holder));
    assert.equal(await status(admin, key, lease.token), 'held');
    for (const s of await poolTokens(own, 2, key)) assert.deepEqual({ t: s.t, k: s.k }, { t: null, k: null });
    // Its connection is closed; the watchdog watches it.
    await eventually('the waiting connection is gone', async () => (await waits()) === 0);
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    assert.deepEqual(await backends(`${app}:own`), [watchdogPid(fx)]);
    await breakIt(lease);
    await lease.release();
  } finally {
    await own.end();
  }
});

test('a grant on the pool whose answer is lost gives back what it may have taken', async () => {
  // A pool whose connection drops as the grant's answer comes back, and
  // which notes the statements run on it directly.
  let dropped = 0;
  const ran = [];
  const fake = {
    options: pool.options,
    Client: pool.Client,
    query: (...a) => {
      ran.push(String(a[0]));
      return pool.query(...a);
    },
    connect: async () => {
      const c = await pool.connect();
      return {
        query: async (...a) => {
          const r = await c.query(...a);
          if (String(a[0]).includes('fence_forget_token(')) throw new Error('Connection terminated unexpectedly');
          return r;
        },
        release: (err) => {
          if (err) dropped += 1;
          c.release(err);
        },
      };
    },
  };
  const fx = new Fence(fake);
  const key = uniqueKey('lostanswer');
  await assert.rejects(fx.acquire(key, { ttlMs: 30000 }), /Connection terminated unexpectedly/);
  assert.equal(dropped, 1, 'the connection is not handed on');
  const n = (await admin.query('SELECT count(*)::int AS n FROM fence_leases WHERE key = $1', [key])).rows[0].n;
  assert.equal(n, 0, 'the grant was given back');
  assert.deepEqual(ran.filter((q) => q.includes('fence_release(')), [releaseOwnedOfKey],
    'by the statement that reads only that key\'s leases');
});

// The statements that give back a grant whose answer was lost, as
// lib/config.js has them.
const releaseOwnedOfKey = 'SELECT fence_release(l.key, l.token) FROM fence_leases_of($1::text) l '
  + 'WHERE l.owner = $2::text';
const releaseOwnedOfAll = 'SELECT fence_release(l.key, l.token) FROM fence_leases l '
  + 'WHERE l.database = current_database() AND l.key = $1::text AND l.owner = $2::text';

test('a lost grant is given back reading one key\'s leases with fence 1.3, all of them with 1.2', async () => {
  const cases = [
    ['fence 1.3', { multi: true, forget: true }, releaseOwnedOfKey],
    ['fence 1.2', { multi: false, forget: false }, releaseOwnedOfAll],
    ['fence 1.3 without fence_forget_token', { multi: true, forget: false }, releaseOwnedOfAll],
    ['a server not asked yet', undefined, releaseOwnedOfAll],
  ];
  for (const [what, server, sql] of cases) {
    const fx = new Fence(pool);
    fx._server = server; // as such a server answers
    assert.equal(fx._releaseOwnedSql(), sql, what);
    // Each statement runs on this server: it releases what the owner holds
    // of the key, and nothing of another owner's.
    const owner = 'pgfence-test:lost-grant';
    const mine = uniqueKey('lostgrant');
    const theirs = uniqueKey('lostgrant');
    await admin.query("SELECT fence_forget_token($1::text, fence_try_lease($1::text, '30 s', owner => $2::text))",
      [mine, owner]);
    await admin.query("SELECT fence_forget_token($1::text, fence_try_lease($1::text, '30 s', owner => 'someone else'))",
      [theirs]);
    await fx._releaseOwned({ key: mine, owner });
    await fx._releaseOwned({ key: theirs, owner });
    const held = (await admin.query('SELECT key FROM fence_leases WHERE key = ANY($1::text[]) ORDER BY key',
      [[mine, theirs]])).rows.map((r) => r.key);
    assert.deepEqual(held, [theirs], `${what}: only the owner's grant is given back`);
    await admin.query('SELECT fence_release(key, token) FROM fence_leases WHERE key = $1', [theirs]);
  }
});

test('fence 1.3 without fence_forget_token takes each lease on a connection of its own', async () => {
  const { own, fx, made } = await countedFence(2);
  fx._server = { multi: true, forget: false }; // as such a server answers
  try {
    const lease = await fx.acquire(uniqueKey('noforget'), { ttlMs: 30000 });
    assert.equal(made.grants(), 1, 'a connection for the grant');
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    await breakIt(lease);
    await lease.release();
  } finally {
    await own.end();
  }
});

test('leases that join the watchdog together cost it one cancel request at a time', async (t) => {
  const { own, fx, made } = await countedFence(4);
  const base = uniqueKey('together');
  const long = await fx.acquire(`${base}:long`, { ttlMs: 30000 });
  const leases = [];
  try {
    await eventually('the watchdog waits', () => waitsForEnd(watchdogPid(fx)));
    await sleep(300); // the cancel requests of its joining are done
    const before = made.n;
    // Twenty grants at once: they join within a few ms of each other, 100
    // ms after each grant.
    const granted = [];
    leases.push(...await Promise.all(Array.from({ length: 20 }, (_, i) => fx.acquire(`${base}:${i}`,
      { ttlMs: 30000 }).then((l) => { granted.push(performance.now()); return l; }))));
    await eventually('all are watched', async () => fx._dog._leases.size === 21
      && !fx._dog._stale() && waitsForEnd(watchdogPid(fx)));
    // One request at a time, each followed by a pause of 50 ms or more: one
    // for the first to join, at most one a pause while the others join,
    // one for the last.
    const spreadMs = Math.max(...granted) - Math.min(...granted);
    const allowed = 2 + Math.ceil(spreadMs / 50);
    const cancels = made.n - before;
    t.diagnostic(`${cancels} cancel requests, grants over ${Math.round(spreadMs)} ms`);
    assert.ok(allowed < 20, `the grants came within ${Math.round(spreadMs)} ms`);
    assert.ok(cancels >= 1 && cancels <= allowed, `${cancels} cancel requests for twenty leases joining`);
    await breakIt(leases[17]);
  } finally {
    await Promise.all([long, ...leases].map((l) => l.release()));
    await own.end();
  }
});
