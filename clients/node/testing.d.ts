// Type declarations of pgfence/testing: fence's virtual lease clock.
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

export declare class VirtualClock {
  /** A pg.Client or pg.Pool of a superuser, on a server with fence.test_clock = on. */
  constructor(queryable: Queryable);
  now(): Promise<Date>;
  /** Put the clock at when; null goes back to real time. */
  set(when: Date | null): Promise<Date | null>;
  /** Stop the clock where it is. */
  freeze(): Promise<Date>;
  /** Move the clock forward by ms. */
  advance(ms: number): Promise<Date>;
  /** Back to real time. */
  real(): Promise<void>;
}
