import {
  CoordinatorUnavailableError,
  ForeignOwnerError,
  IdempotencyConflictError,
  IdempotencyMismatchError,
  LeaseLostError,
  MissingKeyFieldError,
  ProblemType,
} from '@oncely/core';
import { OncelyCallErrorCode, OncelyGraphQLError, callErrorPayloadOf } from '@oncely/nestjs';

describe('oncely refusals outside HTTP', () => {
  it.each([
    [
      new IdempotencyConflictError('shop:pay:v1:t-1:r-1', 1500),
      OncelyCallErrorCode.requestInFlight,
    ],
    [new IdempotencyMismatchError('shop:pay:v1:t-1:r-1'), OncelyCallErrorCode.payloadMismatch],
    [
      new MissingKeyFieldError('body.input.requestId', 'target', 'shop:pay:v1'),
      OncelyCallErrorCode.missingKeyField,
    ],
    [new LeaseLostError('shop:pay:v1:t-1:r-1', 3), OncelyCallErrorCode.leaseLost],
  ])('gives %s the stable code %s', (error, code) => {
    expect(callErrorPayloadOf(error)?.code).toBe(code);
  });

  it('has a code for every problem type, the store and quota refusals included', () => {
    expect(Object.keys(OncelyCallErrorCode).sort()).toEqual(Object.keys(ProblemType).sort());
    expect(OncelyCallErrorCode.storeUnavailable).toBe('ONCELY_STORE_UNAVAILABLE');
    expect(OncelyCallErrorCode.recordQuotaExceeded).toBe('ONCELY_RECORD_QUOTA_EXCEEDED');
    expect(OncelyCallErrorCode.invalidBody).toBe('ONCELY_INVALID_BODY');
  });

  it('carries the retry delay and the reason, never the raw input', () => {
    const payload = callErrorPayloadOf(new IdempotencyConflictError('shop:pay:v1:t-1:r-1', 1500));
    expect(payload).toEqual({
      code: 'ONCELY_REQUEST_IN_FLIGHT',
      status: 409,
      retryAfterMs: 1500,
      message: expect.stringContaining('still in flight'),
    });
  });

  it('names the missing key field', () => {
    const error = new MissingKeyFieldError('body.input.requestId', 'target', 'shop:pay:v1');
    expect(callErrorPayloadOf(error)).toMatchObject({ status: 400, field: 'body.input.requestId' });
  });

  it('leaves errors that are not oncely refusals alone', () => {
    expect(callErrorPayloadOf(new Error('boom'))).toBeUndefined();
  });

  it('puts the code where graphql-js reads it: extensions of the original error', () => {
    const payload = callErrorPayloadOf(new IdempotencyMismatchError('shop:pay:v1:t-1:r-1'))!;
    const error = new OncelyGraphQLError(payload);
    expect(error.extensions).toEqual({ code: 'ONCELY_PAYLOAD_MISMATCH', status: 422 });
    expect(error.code).toBe('ONCELY_PAYLOAD_MISMATCH');
  });

  it('tells a GraphQL or RPC client of a foreign owner no service name', () => {
    const error = new ForeignOwnerError('shop:pay:v1:t-1:r-1', 'billing-api', 'orders-api');
    expect(callErrorPayloadOf(error)).toEqual({
      code: 'ONCELY_FOREIGN_OWNER',
      status: 409,
      message:
        'This key is already used by another part of the system; nothing was replayed, overwritten or run. A retry gets the same answer until the server is reconfigured.',
    });
  });

  it('maps an unreachable coordinator to a code', () => {
    const error = new CoordinatorUnavailableError('redis', { cause: new Error('ECONNREFUSED') });
    expect(callErrorPayloadOf(error)?.code).toBe(OncelyCallErrorCode.coordinatorUnavailable);
  });
});
