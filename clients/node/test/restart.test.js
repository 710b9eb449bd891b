'use strict';
// A server restart ends every lease (PGFENCE_TEST_RESTART, a shell command
// that restarts the server).  In a file of its own, whose name sorts last:
// the restart also ends every other connection.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execSync } = require('node:child_process');
const { Fence, LeaseLostError } = require('pgfence');
const { newPool, uniqueKey, aborted } = require('./helpers');

test('a server restart loses the lease (connection or deadline)', { skip: !process.env.PGFENCE_TEST_RESTART }, async () => {
  const own = newPool(2);
  own.on('error', () => {});
  const fx = new Fence(own);
  const key = uniqueKey('restart');
  try {
    await assert.rejects(fx.withLease(key, { ttlMs: 4000 }, async (lease, signal) => {
      execSync(process.env.PGFENCE_TEST_RESTART, { stdio: 'ignore' });
      await aborted(signal, 6000);
    }), (e) => e instanceof LeaseLostError && ['connection', 'deadline'].includes(e.how));
  } finally {
    await own.end();
  }
});
