import type { FailurePolicy } from '../flight/flight.types.js';
import { SharedFlightError } from '../flight/shared-flight.error.js';

/** 4xx statuses that say "not now" rather than "never": a retry may succeed. */
const RETRYABLE_CLIENT_STATUSES: ReadonlySet<number> = new Set([408, 409, 425, 429]);

/** What a deterministic error becomes on its way to other callers. */
export interface SerializedFlightError {
  readonly name: string;
  readonly message: string;
  readonly status: number;
  readonly code?: string | number;
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
    const source = (typeof error === 'object' && error !== null ? error : {}) as Record<
      string,
      unknown
    >;
    const name = typeof source.name === 'string' ? source.name : 'Error';
    const message = typeof source.message === 'string' ? source.message : String(error);
    const code = source.code;
    const body = typeof source.getResponse === 'function' ? source.getResponse() : source.body;
    return {
      name,
      message,
      status: httpStatusOf(error) ?? 500,
      ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
      ...(body !== undefined ? { body } : {}),
    };
  }

  deserialize(serialized: unknown): Error {
    const source = (
      typeof serialized === 'object' && serialized !== null ? serialized : {}
    ) as Partial<Record<keyof SerializedFlightError, unknown>>;
    const code = source.code;
    return new SharedFlightError(
      typeof source.name === 'string' ? source.name : 'Error',
      typeof source.message === 'string' ? source.message : 'The shared flight failed',
      typeof source.status === 'number' ? source.status : 500,
      typeof code === 'string' || typeof code === 'number' ? code : undefined,
      source.body,
    );
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
