/** Source of the current time in milliseconds; injectable so TTL behaviour can be tested. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
