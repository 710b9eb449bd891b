'use strict';
// Through PgBouncer in transaction mode, every client sharing one server
// connection (PGFENCE_TEST_PGBOUNCER_URL): the pool goes through it (the
// grants on a free key included), the watchdog and a wait for a held key
// straight to the server (clientConfig).
const test = require('node:test');
const assert = require('node:assert/strict');
const { setTimeout: sleep } = require('node:timers/promises');
const { Pool } = require('pg');
const { Fence, LeaseLostError } = require('pgfence');
const { newPool, uniqueKey, protectedTable, status, aborted } = require('./helpers');

const URL = process.env.PGFENCE_TEST_PGBOUNCER_URL;
const skip = !URL && 'PGFENCE_TEST_PGBOUNCER_URL is not set';

let pool;
let admin;
test.before(() => {
  if (skip) return;
  pool = new Pool({ connectionString: URL, max: 4 });
  pool.on('error', () => {});
  admin = newPool(2);
});
test.after(async () => {
  if (skip) return;
  await pool.end();
  await admin.end();
});

test('leases through a transaction pooler: renewed, tokens per transaction only', { skip }, async () => {
  await protectedTable(admin, 'node_bouncer');
  const fx = new Fence(pool, { clientConfig: {} });
  const one = uniqueKey('bouncer1');
  const two = uniqueKey('bouncer2');
  await fx.withLease(one, { ttlMs: 1000 }, async (a) => {
    await fx.withLease(two, { ttlMs: 1000 }, async (b) => {
      assert.ok(b.token > a.token);
      const seen = await a.transaction(async (c) => {
        await c.query("UPDATE node_bouncer SET result = 'by a' WHERE id = 1");
        return (await c.query('SELECT fence_current_token()::bigint AS t')).rows[0].t;
      });
      assert.equal(BigInt(seen), a.token);
      // Outside the lease's transactions, the one server connection
      // carries neither token.
      const none = (await pool.query('SELECT fence_current_token() AS t')).rows[0].t;
      assert.equal(none, null);
      await sleep(2500); // renewed through the pooler, past both TTLs
      assert.equal(await status(admin, one, a.token), 'held');
      assert.equal(await status(admin, two, b.token), 'held');
    });
  });
  const row = (await admin.query('SELECT result, fence::bigint AS f FROM node_bouncer')).rows[0];
  assert.equal(row.result, 'by a');
});

test('through a transaction pooler, a lost lease cancels the running statement', { skip }, async () => {
  const fx = new Fence(pool, { clientConfig: {} });
  const key = uniqueKey('bouncercancel');
  const t0 = Date.now();
  await assert.rejects(fx.withLease(key, { ttlMs: 30000 }, async (lease, signal) => {
    setTimeout(() => admin.query('SELECT fence_break($1)', [key]), 300);
    const running = lease.transaction((c) => c.query('SELECT pg_sleep(30)'));
    await aborted(signal, 2000);
    await running;
  }), (e) => e instanceof LeaseLostError && e.how === 'broken');
  assert.ok(Date.now() - t0 < 5000, 'cancelled in time');
  assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
});
