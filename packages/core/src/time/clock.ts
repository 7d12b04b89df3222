/** Source of the current time in milliseconds; injectable so TTL behaviour can be tested. */
export interface Clock {
  /** Milliseconds since the Unix epoch, as `Date.now()` counts them. */
  now(): number;
}

/** The wall clock, `Date.now()`: what every TTL uses unless a test injects another clock. */
export const systemClock: Clock = { now: () => Date.now() };
