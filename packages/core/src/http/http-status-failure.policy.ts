import type { FailurePolicy } from '../flight/flight.types.js';
import {
  fieldsOf,
  serializeError,
  sharedFlightErrorOf,
  type SerializedError,
} from '../flight/serialized-error.js';

/** 4xx statuses that say "not now" rather than "never": a retry may succeed. */
const RETRYABLE_CLIENT_STATUSES: ReadonlySet<number> = new Set([408, 409, 425, 429]);

/** What a deterministic error becomes on its way to other callers. */
export interface SerializedFlightError extends SerializedError {
  /** The error's HTTP status; 500 when it carried none. */
  readonly status: number;
  /** The response body it carried (`getResponse()` on Nest's `HttpException`, else `body`). */
  readonly body?: unknown;
}

/**
 * The failure policy of HTTP work: an error carrying an HTTP status — a numeric `status` or
 * `statusCode`, or a `getStatus()` method as on Nest's `HttpException` — in the 4xx range,
 * except 408, 409, 425 and 429, is deterministic: the same input fails the same way, so it is
 * shared with waiters and cached for `errorTtl`. Everything else (5xx, timeouts, plain thrown
 * errors) is transient and lets a waiter retry.
 *
 * A deterministic error is serialised as `{ name, message, status, code?, body? }` (`body` from
 * `getResponse()` as on `HttpException`, else a `body` property) and comes back to followers as
 * a `SharedFlightError` holding the same status and body.
 */
export class HttpStatusFailurePolicy implements FailurePolicy {
  classify(error: unknown): 'deterministic' | 'transient' {
    const status = httpStatusOf(error);
    return status !== undefined &&
      status >= 400 &&
      status < 500 &&
      !RETRYABLE_CLIENT_STATUSES.has(status)
      ? 'deterministic'
      : 'transient';
  }

  serialize(error: unknown): SerializedFlightError {
    const source = fieldsOf(error);
    const body = typeof source.getResponse === 'function' ? source.getResponse() : source.body;
    return {
      ...serializeError(error),
      status: httpStatusOf(error) ?? 500,
      ...(body !== undefined ? { body } : {}),
    };
  }

  deserialize(serialized: unknown): Error {
    return sharedFlightErrorOf(serialized);
  }
}

/** The one `HttpStatusFailurePolicy` the call layer shares; it holds no state. */
export const httpStatusFailurePolicy: FailurePolicy = new HttpStatusFailurePolicy();

/** The HTTP status an error carries, if any. */
export function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const candidate = error as { status?: unknown; statusCode?: unknown; getStatus?: unknown };
  if (isStatus(candidate.status)) return candidate.status;
  if (isStatus(candidate.statusCode)) return candidate.statusCode;
  if (typeof candidate.getStatus === 'function') {
    const status: unknown = (candidate.getStatus as () => unknown).call(error);
    if (isStatus(status)) return status;
  }
  return undefined;
}

function isStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;
}
