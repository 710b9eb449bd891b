'use strict';
// A worker process for processes.test.js: takes the lease on a job, writes
// its row through lease.transaction(), and reports on stdout.
//   node worker.js holder KEY TABLE TTL_MS: write "started by <pid>", print
//     "started TOKEN", wait for a line on stdin, then write "done by <pid>"
//     and print how that went ("wrote", or the error's class and how).
//   node worker.js finisher KEY TABLE TTL_MS: wait for the lease, write
//     "done by <pid>", print "done TOKEN".
//   node worker.js sleeper KEY TABLE TTL_MS: take the lease, print
//     "started TOKEN", and work until killed.
const readline = require('node:readline');
const { setTimeout: sleep } = require('node:timers/promises');
const { Pool } = require('pg');
const { Fence } = require('pgfence');

const [mode, key, table, ttl] = process.argv.slice(2);
const ttlMs = Number(ttl);

function nextLine() {
  const rl = readline.createInterface({ input: process.stdin });
  return new Promise((resolve) => rl.once('line', (line) => {
    rl.close();
    process.stdin.destroy();
    resolve(line);
  }));
}

function write(lease, result) {
  return lease.transaction((c) => c.query(`UPDATE ${table} SET result = $1 WHERE id = 1`, [result]));
}

async function main() {
  const pool = new Pool({ max: 3 });
  pool.on('error', () => {});
  const fx = new Fence(pool);
  try {
    await fx.withLease(key, { ttlMs, waitMs: 10000 }, async (lease, signal) => {
      if (mode === 'finisher') {
        await write(lease, `done by ${process.pid}`);
        console.log(`done ${lease.token}`);
        return;
      }
      await write(lease, `started by ${process.pid}`);
      console.log(`started ${lease.token}`);
      if (mode === 'sleeper') {
        await sleep(600000, undefined, { signal });
        return;
      }
      await nextLine();
      await write(lease, `done by ${process.pid}`);
      console.log('wrote');
    });
  } catch (e) {
    console.log(`error ${e.constructor.name} ${e.how || e.sqlstate || e.message}`);
  } finally {
    await pool.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
