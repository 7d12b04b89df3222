import type { FailurePolicy } from '../flight/flight.types.js';
import { transientFailurePolicy } from '../flight/transient-failure.policy.js';
import { httpStatusFailurePolicy } from '../http/http-status-failure.policy.js';
import type { StoredResponse } from '../record/stored-response.js';
import { ResponseSignal } from './response-signal.js';

interface SerializedResponse {
  readonly response: StoredResponse;
}

/**
 * Failure policy of protected HTTP calls: responses carried by a `ResponseSignal` keep their own
 * classification and cross processes whole (status, kept headers, body); thrown errors follow
 * `HttpStatusFailurePolicy`.
 */
export const httpCallFailurePolicy: FailurePolicy = {
  classify: (error) =>
    error instanceof ResponseSignal
      ? error.deterministic
        ? 'deterministic'
        : 'transient'
      : httpStatusFailurePolicy.classify(error),
  serialize: (error) =>
    error instanceof ResponseSignal
      ? ({ response: error.response } satisfies SerializedResponse)
      : { error: httpStatusFailurePolicy.serialize(error) },
  deserialize: (serialized) => {
    const value = serialized as Partial<SerializedResponse> & { error?: unknown };
    return value.response !== undefined
      ? ResponseSignal.kept(value.response)
      : httpStatusFailurePolicy.deserialize(value.error);
  },
};

/**
 * Failure policy of the idempotency guard's flight: no failure is cached. The durable record
 * decides; a waiter whose leader failed asks the record store itself. The one failure waiters
 * share, that of the run again after a failed one, crosses processes as HTTP calls' failures do,
 * so a response that was not kept (a 503) reaches them as it reached its caller.
 */
export const recordGuardFailurePolicy: FailurePolicy = {
  ...httpCallFailurePolicy,
  classify: transientFailurePolicy.classify,
};
