import type { FailurePolicy } from './flight.types.js';
import { serializeError, sharedFlightErrorOf } from './serialized-error.js';

/**
 * The engine's default failure policy, protocol-neutral: every failure is transient, so nothing
 * a leader throws is shared or cached; a waiter runs the work again. Only the engine's own errors
 * (a result too large or not serialisable) reach waiters, as a `SharedFlightError` with status
 * 500. To share errors that would recur, such as HTTP 4xx, pass a policy that says which:
 * `HttpStatusFailurePolicy` does so by status.
 */
export const transientFailurePolicy: FailurePolicy = {
  classify: () => 'transient',
  serialize: serializeError,
  deserialize: sharedFlightErrorOf,
};
