// Compiled (never run) by test/t/045_node_client.pl with tsc --strict
// against the installed package: the declarations must describe the API as
// the README uses it.
import { once } from 'node:events';
import { Pool } from 'pg';
import {
  Fence, Lease, LeaseLostError, StaleTokenError, LeaseUnavailableError, BreakerOpenError, classify,
} from 'pgfence';
import { VirtualClock } from 'pgfence/testing';

export async function example(pool: Pool): Promise<number> {
  const fx = new Fence(pool, { renewTimeoutMs: 1000, clientConfig: { host: '/tmp' } });
  fx.on('lost', (lease: Lease, err: LeaseLostError) => console.log(lease.key, err.how, err.token + 1n));
  fx.on('released', (lease, info) => console.log(lease.token, info.held));
  const n: number = await fx.withLease('job:1', { ttlMs: 10000, waitMs: 0 }, async (lease, signal) => {
    const token: bigint = lease.token;
    const when: Date = lease.expiresAt;
    signal.throwIfAborted();
    const rows = await lease.transaction(async (client) => (await client.query('SELECT 1 AS one')).rows);
    console.log(when, rows.length);
    return Number(token);
  });
  const lease = await fx.acquire(42, { signal: AbortSignal.timeout(1000) });
  try {
    lease.check();
  } finally {
    const held: boolean = await lease.release();
    console.log(held);
  }
  await fx.withPermit('p', 3, async (permit) => permit.permits);
  await fx.withBreaker('payments', { failureThreshold: 3, openForMs: 1000 }, async (d) => d.decision);
  const e = classify(new Error('x'));
  if (e instanceof StaleTokenError) console.log(e.sqlstate);
  if (e instanceof LeaseUnavailableError) console.log(e.waitMs);
  if (e instanceof BreakerOpenError) console.log(e.retryAt);
  const clock = new VirtualClock(pool);
  await clock.freeze();
  await clock.advance(31000);
  await once(lease.signal, 'abort');
  await clock.real();
  return n;
}
