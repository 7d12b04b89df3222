import {
  CoordinatorUnavailableError,
  FlightBusyError,
  ForeignOwnerError,
  IdempotencyConflictError,
  InMemoryCapacityError,
  IdempotencyKeyMalformedError,
  IdempotencyKeyMissingError,
  IdempotencyMismatchError,
  InvalidBodyError,
  KeyInputError,
  LeaseLostError,
  MaxDurationExceededError,
  MissingKeyFieldError,
  PayloadTooLargeError,
  ProblemType,
  RecordStoreUnavailableError,
  ResultTooLargeError,
  OncelyError,
  UnauthenticatedError,
  UnstorableValueError,
  toProblemResponse,
} from '@oncely/core';
import { retryAfterSeconds } from '../../src/http/problem-details.js';

describe('toProblemResponse', () => {
  it.each([
    [new IdempotencyKeyMissingError('idempotency-key'), 400, ProblemType.idempotencyKeyMissing],
    [
      new IdempotencyKeyMalformedError('idempotency-key', 'too long'),
      400,
      ProblemType.idempotencyKeyMalformed,
    ],
    [
      new InvalidBodyError([{ property: 'amount', messages: ['amount must be positive'] }]),
      400,
      ProblemType.invalidBody,
    ],
    [
      new MissingKeyFieldError('user.tenantId', 'scope', 'shop:pay:v1'),
      400,
      ProblemType.missingKeyField,
    ],
    [
      new KeyInputError('non_finite_number', 'body.amount', 'NaN'),
      400,
      ProblemType.invalidKeyInput,
    ],
    [new UnauthenticatedError('user.tenantId'), 401, ProblemType.unauthenticated],
    [new IdempotencyConflictError('shop:pay:v1:t:k', 2500), 409, ProblemType.requestInFlight],
    [new FlightBusyError('shop:pay:v1:t:k:ab', 10), 409, ProblemType.requestInFlight],
    [new PayloadTooLargeError('response', 10, 20), 413, ProblemType.payloadTooLarge],
    [new KeyInputError('too_large', 'body', ''), 413, ProblemType.payloadTooLarge],
    [new ResultTooLargeError(20, 10), 413, ProblemType.payloadTooLarge],
    [new IdempotencyMismatchError('shop:pay:v1:t:k'), 422, ProblemType.payloadMismatch],
    [new LeaseLostError('shop:pay:v1:t:k', 3), 503, ProblemType.leaseLost],
  ])('maps %p to %i with a stable type', (error, status, type) => {
    const problem = toProblemResponse(error);
    expect(problem?.status).toBe(status);
    expect(problem?.headers['content-type']).toBe('application/problem+json');
    expect(problem?.body).toMatchObject({ type, status, detail: error.message });
    expect(typeof problem?.body.title).toBe('string');
  });

  it('maps a foreign owner to a 409 that names no service; the error keeps both for operators', () => {
    const error = new ForeignOwnerError('shop:pay:v1:t:k', 'billing-api', 'orders-api');
    const problem = toProblemResponse(error);

    expect(problem?.status).toBe(409);
    expect(problem?.headers).toEqual({ 'content-type': 'application/problem+json' });
    expect(problem?.body).toEqual({
      type: 'urn:oncely:problem:foreign-owner',
      title: 'Key owned by another service',
      status: 409,
      detail:
        'This key is already used by another part of the system; nothing was replayed, overwritten or run. A retry gets the same answer until the server is reconfigured.',
    });
    expect(JSON.stringify(problem?.body)).not.toMatch(/billing-api|orders-api/);
    expect(error).toMatchObject({ owner: 'billing-api', foreignOwner: 'orders-api' });
    expect(error.message).toMatch(
      /held by service "orders-api", not by "billing-api".*shared: true/,
    );
    expect(ProblemType.foreignOwner).toBe('urn:oncely:problem:foreign-owner');
  });

  it('maps an unreachable coordinator to a 503 that names neither the backend nor its address', () => {
    const error = new CoordinatorUnavailableError('redis 10.0.3.7:6379');
    const problem = toProblemResponse(error);

    expect(problem?.headers).toEqual({
      'content-type': 'application/problem+json',
      'retry-after': '1',
    });
    expect(problem?.body).toEqual({
      type: 'urn:oncely:problem:coordinator-unavailable',
      title: 'Coordinator unavailable',
      status: 503,
      detail:
        'The server cannot coordinate duplicate requests right now; nothing was run. Retry the request.',
    });
    expect(error.message).toContain('redis 10.0.3.7:6379');
  });

  it('adds Retry-After in whole seconds, rounded up, to 409s', () => {
    expect(toProblemResponse(new IdempotencyConflictError('i', 2001))?.headers['retry-after']).toBe(
      '3',
    );
    expect(toProblemResponse(new FlightBusyError('k', 0))?.headers['retry-after']).toBe('1');
    expect(
      toProblemResponse(new IdempotencyMismatchError('i'))?.headers['retry-after'],
    ).toBeUndefined();
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
  });

  it('maps a handler past maxDuration to 503 lease-lost with Retry-After, naming the limit', () => {
    const problem = toProblemResponse(new MaxDurationExceededError('shop:pay:v1:t:k', 3, 300_000));
    expect(problem?.status).toBe(503);
    expect(problem?.headers['retry-after']).toBe('1');
    expect(problem?.body).toMatchObject({ type: ProblemType.leaseLost, maxDurationMs: 300_000 });
    expect(problem?.body.detail).toContain('maxDuration');
    expect(toProblemResponse(new LeaseLostError('k', 1))?.body).not.toHaveProperty('maxDurationMs');
  });

  it('maps a lost record store to a retryable 503 without the driver detail', () => {
    const cause = new Error('terminating connection due to administrator command');
    const problem = toProblemResponse(new RecordStoreUnavailableError('postgres', { cause }));
    expect(problem?.status).toBe(503);
    expect(problem?.headers['retry-after']).toBe('1');
    expect(problem?.body.type).toBe(ProblemType.storeUnavailable);
    expect(JSON.stringify(problem?.body)).not.toContain('administrator');
  });

  it('maps a full in-memory adapter to a retryable 503 that tells the client when, not why', () => {
    const problem = toProblemResponse(
      new InMemoryCapacityError('InMemoryIdempotencyRecordStore', 'maxRecords', 100_000, 2_500),
    );
    expect(problem?.status).toBe(503);
    expect(problem?.headers).toEqual({
      'content-type': 'application/problem+json',
      'retry-after': '3',
    });
    expect(problem?.body).toEqual({
      type: 'urn:oncely:problem:capacity-exceeded',
      title: 'Server at capacity',
      status: 503,
      detail:
        'The server holds as many requests as it can keep track of; nothing was started. Retry later.',
    });
    expect(ProblemType.capacityExceeded).toBe('urn:oncely:problem:capacity-exceeded');
  });

  it.each([
    [new UnstorableValueError('Jobs.settle', '$.run', 'an instance of Run …'), 'unstorable-value'],
    [
      new (class extends OncelyError {
        readonly code = 'write_outside_transaction';
      })('tried to run INSERT on Repository<Payment>'),
      'write-outside-transaction',
    ],
  ])('maps %p to a 500 whose detail keeps the developer message out', (error, type) => {
    const problem = toProblemResponse(error);
    expect(problem?.status).toBe(500);
    expect(problem?.body.type).toBe(`urn:oncely:problem:${type}`);
    expect(problem?.body.detail).not.toBe(error.message);
    expect(JSON.stringify(problem?.body)).not.toMatch(/Jobs\.settle|Repository/);
  });

  it('lists the invalid properties and names the missing field', () => {
    const invalid = toProblemResponse(new InvalidBodyError([{ property: 'a.b', messages: ['m'] }]));
    expect(invalid?.body.errors).toEqual([{ property: 'a.b', messages: ['m'] }]);
    const missing = toProblemResponse(new MissingKeyFieldError('user.tenantId', 'scope', 'op'));
    expect(missing?.body.field).toBe('user.tenantId');
  });

  it('leaves anything else to the framework', () => {
    expect(toProblemResponse(new Error('boom'))).toBeUndefined();
    expect(toProblemResponse({ status: 400 })).toBeUndefined();
  });
});
