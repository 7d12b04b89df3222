import { LeaseLostError } from '../errors/lease-lost.error.js';

/**
 * The handler outlived its route's `maxDuration`: its signal was aborted, its lease released and
 * nothing it does from now on is kept. A lease lost on purpose, so it maps to the same `503
 * lease-lost` problem (with `Retry-After`); unlike a transient failure, no waiter runs the work
 * again in its place, while a later retry may.
 */
export class MaxDurationExceededError extends LeaseLostError {
  constructor(
    identity: string,
    fence: number,
    /** The route's `maxDuration` the handler ran past. */
    readonly maxDurationMs: number,
  ) {
    super(identity, fence);
    this.message = `The handler for "${identity}" (fence ${fence}) ran past maxDuration (${maxDurationMs} ms): its signal was aborted and nothing it does now is kept. Make the handler honour its abort signal and finish sooner, or raise maxDuration for this route.`;
  }
}
