import type { FailurePolicy } from './flight.types.js';
import { SharedFlightError } from './shared-flight.error.js';

/** What the engine's own errors (a result it cannot store) become on their way to waiters. */
interface SerializedEngineError {
  readonly name: string;
  readonly message: string;
  readonly code?: string | number;
}

/**
 * The engine's default failure policy, protocol-neutral: every failure is transient, so nothing
 * a leader throws is shared or cached; a waiter runs the work again. Only the engine's own errors
 * (a result too large or not serialisable) reach waiters, as a `SharedFlightError` with status
 * 500. To share errors that would recur, such as HTTP 4xx, pass a policy that says which:
 * `HttpStatusFailurePolicy` does so by status.
 */
export const transientFailurePolicy: FailurePolicy = {
  classify: () => 'transient',
  serialize: (error): SerializedEngineError => {
    const source = (typeof error === 'object' && error !== null ? error : {}) as Record<
      string,
      unknown
    >;
    const code = source.code;
    return {
      name: typeof source.name === 'string' ? source.name : 'Error',
      message: typeof source.message === 'string' ? source.message : String(error),
      ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    };
  },
  deserialize: (serialized) => {
    const source = (
      typeof serialized === 'object' && serialized !== null ? serialized : {}
    ) as Partial<Record<keyof SerializedEngineError, unknown>>;
    const code = source.code;
    return new SharedFlightError(
      typeof source.name === 'string' ? source.name : 'Error',
      typeof source.message === 'string' ? source.message : 'The shared flight failed',
      500,
      typeof code === 'string' || typeof code === 'number' ? code : undefined,
    );
  },
};
