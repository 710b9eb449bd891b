'use strict';
// Leases held by other processes: a holder frozen past its TTL, and a holder
// killed.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');
const { Fence } = require('pgfence');
const { newPool, uniqueKey, protectedTable, status } = require('./helpers');

const WORKER = path.join(__dirname, 'worker.js');

// A worker process, and a way to wait for the next line it prints.
function worker(mode, key, table, ttlMs) {
  const child = spawn(process.execPath, [WORKER, mode, key, table, String(ttlMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = [];
  const waiters = [];
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      lines.push(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
      while (waiters.length && lines.length) waiters.shift()(lines.shift());
    }
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  function line(ms = 15000) {
    if (lines.length) return Promise.resolve(lines.shift());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${mode}: no line within ${ms} ms`)), ms);
      waiters.push((l) => { clearTimeout(timer); resolve(l); });
    });
  }
  return { child, line, exited };
}

let admin;
test.before(() => { admin = newPool(2); });
test.after(() => admin.end());

test('the frozen holder: its late write never lands, and it learns the loss', async (t) => {
  const key = uniqueKey('frozen');
  await protectedTable(admin, 'node_jobs');
  const a = worker('holder', key, 'node_jobs', 1500);
  const [, tokenA] = (await a.line()).split(' ');
  assert.equal((await admin.query('SELECT result FROM node_jobs')).rows[0].result, `started by ${a.child.pid}`);

  a.child.kill('SIGSTOP');
  await sleep(2500); // past A's TTL: nothing renews it
  const b = worker('finisher', key, 'node_jobs', 30000);
  const [word, tokenB] = (await b.line()).split(' ');
  assert.equal(word, 'done');
  assert.ok(BigInt(tokenB) > BigInt(tokenA));
  assert.deepEqual(await b.exited, { code: 0, signal: null });

  // A wakes up and writes what it computed.
  a.child.stdin.write('write\n');
  a.child.kill('SIGCONT');
  const outcome = await a.line();
  t.diagnostic(`the frozen holder saw: ${outcome}`);
  assert.match(outcome, /^error (LeaseLostError (expired|deadline|superseded)|StaleTokenError LF001)$/);
  assert.deepEqual(await a.exited, { code: 0, signal: null });

  const row = (await admin.query('SELECT result, fence::bigint AS f FROM node_jobs')).rows[0];
  assert.deepEqual(row, { result: `done by ${b.child.pid}`, f: tokenB });
});

test('a killed holder\'s lease ends by its TTL, and the next worker gets it then', async () => {
  const key = uniqueKey('killed');
  await protectedTable(admin, 'node_killed');
  const c = worker('sleeper', key, 'node_killed', 1000);
  const [, token] = (await c.line()).split(' ');
  c.child.kill('SIGKILL');
  const killedAt = Date.now();
  await c.exited;
  assert.equal(await status(admin, key, BigInt(token)), 'held');

  const pool = newPool(2);
  try {
    const fx = new Fence(pool);
    await fx.withLease(key, { ttlMs: 5000, waitMs: 5000 }, async (lease) => {
      const after = Date.now() - killedAt;
      assert.ok(lease.token > BigInt(token));
      assert.ok(after < 2500, `granted ${after} ms after the kill`); // TTL 1000, not the 5 s wait
    });
    assert.notEqual(await status(admin, key, BigInt(token)), 'held');
  } finally {
    await pool.end();
  }
});
