import type { Clock } from '@oncely/core/adapter';

/** A clock that only moves when told to, so TTLs expire without waiting. */
export class ManualClock implements Clock {
  #now = 1_700_000_000_000;

  now(): number {
    return this.#now;
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}
