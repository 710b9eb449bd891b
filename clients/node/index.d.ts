// Type declarations of pgfence, fence's client for node-postgres.
import { EventEmitter } from 'node:events';
import type { Pool, PoolClient, ClientConfig } from 'pg';

export type LostHow = 'expired' | 'superseded' | 'released' | 'broken' | 'connection' | 'deadline';
export declare const LOST_HOWS: readonly LostHow[];

export type LeaseKey = string | number | bigint;

export interface LeaseOptions {
  /** Time to live in milliseconds (default 30000); renewed every third of it. */
  ttlMs?: number;
  /** undefined: wait as long as it takes; 0: try once; a number: wait that long, then LeaseUnavailableError. */
  waitMs?: number;
  /** The detached lease's owner name (default: one made for this lease). At most 48 bytes. */
  owner?: string;
  /** Abandons the wait for the lease (acquire only). */
  signal?: AbortSignal;
}

export interface FenceOptions {
  /** Configuration of the fence's own connections: its watchdog's, and a lease's while it waits for a held key (default: the pool's). */
  clientConfig?: ClientConfig;
  /** Bound on each renewal (default: a third of the TTL). */
  renewTimeoutMs?: number;
  /** Bound on making a lease's own connection (default 10000). */
  connectTimeoutMs?: number;
  /** How often the watchdog asks again while the lease is held (default 30000). */
  watchdogPollMs?: number;
  /** The pg Client class for the lease's own connections (default: the pool's). */
  Client?: new (config?: ClientConfig) => any;
}

export declare class Lease {
  readonly key: string;
  readonly token: bigint;
  readonly owner: string;
  readonly ttlMs: number;
  /** For a permit: how many permits its key has. */
  readonly permits: number | undefined;
  /** The expiry the server last granted, by its lease clock. */
  readonly expiresAt: Date;
  /** Aborted the moment the lease ends, for any reason; its reason is a LeaseLostError. */
  readonly signal: AbortSignal;
  /** How the lease was lost ('released' after release()), or null while held. */
  readonly how: LostHow | null;
  readonly lost: boolean;
  /** True while renewals fail and the local deadline has not passed. */
  readonly suspended: boolean;
  /** Milliseconds before the local deadline. */
  remainingMs(now?: number): number;
  /** Throws LeaseLostError once the lease is lost or released. */
  check(): void;
  /** A transaction on a pooled client that carries the token, committed when fn resolves. */
  transaction<T>(fn: (client: PoolClient) => Promise<T> | T): Promise<T>;
  /** Gives the lease back by its token; true if the server still had it. */
  release(): Promise<boolean>;
}

export interface BreakerOptions {
  failureThreshold?: number;
  failureRate?: number;
  windowSize?: number;
  openForMs?: number;
  maxOpenForMs?: number;
  probeTtlMs?: number;
}

export interface BreakerDecision {
  decision: 'call' | 'probe' | 'fail_fast';
  probeToken: bigint | null;
  retryAt: Date | null;
}

export declare class Breaker {
  constructor(pool: Pool, name: string);
  readonly name: string;
  allow(options?: BreakerOptions): Promise<BreakerDecision>;
  report(success: boolean, probeToken?: bigint | null, durationMs?: number | null): Promise<string>;
  call<T>(fn: (decision: BreakerDecision) => Promise<T> | T): Promise<T>;
  call<T>(options: BreakerOptions, fn: (decision: BreakerDecision) => Promise<T> | T): Promise<T>;
}

export type LeaseCallback<T> = (lease: Lease, signal: AbortSignal) => Promise<T> | T;

export interface FenceEvents {
  acquired: [lease: Lease];
  renewed: [lease: Lease];
  suspended: [lease: Lease, error: Error];
  lost: [lease: Lease, error: LeaseLostError];
  released: [lease: Lease, info: { held: boolean }];
  warning: [lease: Lease | null, error: Error];
}

export declare class Fence extends EventEmitter {
  constructor(pool: Pool, options?: FenceOptions);
  readonly pool: Pool;
  acquire(key: LeaseKey, options?: LeaseOptions): Promise<Lease>;
  acquirePermit(key: LeaseKey, permits: number, options?: LeaseOptions): Promise<Lease>;
  withLease<T>(key: LeaseKey, options: LeaseOptions, fn: LeaseCallback<T>): Promise<T>;
  withLease<T>(key: LeaseKey, fn: LeaseCallback<T>): Promise<T>;
  withPermit<T>(key: LeaseKey, permits: number, options: LeaseOptions, fn: LeaseCallback<T>): Promise<T>;
  withPermit<T>(key: LeaseKey, permits: number, fn: LeaseCallback<T>): Promise<T>;
  breaker(name: string): Breaker;
  withBreaker<T>(name: string, options: BreakerOptions, fn: (decision: BreakerDecision) => Promise<T> | T): Promise<T>;
  withBreaker<T>(name: string, fn: (decision: BreakerDecision) => Promise<T> | T): Promise<T>;
  on<E extends keyof FenceEvents>(event: E, listener: (...args: FenceEvents[E]) => void): this;
  once<E extends keyof FenceEvents>(event: E, listener: (...args: FenceEvents[E]) => void): this;
  off<E extends keyof FenceEvents>(event: E, listener: (...args: FenceEvents[E]) => void): this;
}

export declare class FenceError extends Error {
  /** The SQLSTATE behind it, when there is one. */
  readonly sqlstate: string | undefined;
  readonly cause?: unknown;
}
/** SQLSTATE LF001: a newer holder has written the row. */
export declare class StaleTokenError extends FenceError {}
/** SQLSTATE LF002: the token is not its lease's live token; also marks the lease lost. */
export declare class LeaseNotHeldError extends FenceError {}
/** SQLSTATE LF003: the table requires a token, and the write carried none. */
export declare class TokenRequiredError extends FenceError {}
export declare class LeaseUnavailableError extends FenceError {
  readonly key: string;
  readonly waitMs: number | undefined;
}
export declare class LeaseLostError extends FenceError {
  readonly key: string;
  readonly token: bigint;
  readonly how: LostHow;
}
export declare class BreakerOpenError extends FenceError {
  readonly breaker: string;
  readonly retryAt: Date | null;
}

/** The FenceError a driver's error means (by its SQLSTATE), or null. */
export declare function classify(err: unknown): FenceError | null;
