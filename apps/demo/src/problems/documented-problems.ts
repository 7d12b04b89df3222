import { ProblemType } from '@oncely/core';
import type { DocumentedProblem } from './api-problem-responses.decorator.js';
import { DemoProblemType } from './problem.exception.js';

/** The problems routes share, worded once for the OpenAPI document. */
export const Problems = {
  invalidBody: {
    status: 400,
    type: ProblemType.invalidBody,
    when: 'the body fails validation; nothing was locked or recorded.',
  },
  keyMissing: {
    status: 400,
    type: ProblemType.idempotencyKeyMissing,
    when: 'the route requires an `Idempotency-Key` header and none was sent.',
  },
  keyMalformed: {
    status: 400,
    type: ProblemType.idempotencyKeyMalformed,
    when: 'the `Idempotency-Key` is not 1–255 printable ASCII characters (token or quoted string).',
  },
  invalidHeader: {
    status: 400,
    type: DemoProblemType.invalidHeader,
    when: '`X-Simulate-Latency-Ms` is not an integer from 0 to 10000.',
  },
  keyInput: {
    status: 400,
    type: ProblemType.invalidKeyInput,
    when: 'a value entering the key cannot be canonicalised.',
  },
  tenantMissing: {
    status: 401,
    type: DemoProblemType.tenantMissing,
    when: '`X-Tenant-Id` is missing or not 1–64 letters, digits, `.`, `_` or `-`.',
  },
  inFlight: {
    status: 409,
    type: ProblemType.requestInFlight,
    when: 'the same request is still being processed; retry after `Retry-After` seconds to get its outcome.',
  },
  mismatch: {
    status: 422,
    type: ProblemType.payloadMismatch,
    when: 'the idempotency identity was used before with a different payload; the first outcome is kept.',
  },
  tooLarge: {
    status: 413,
    type: ProblemType.payloadTooLarge,
    when: 'the request body (or the response to keep) exceeds its limit.',
  },
  coordinatorDown: {
    status: 503,
    type: ProblemType.coordinatorUnavailable,
    when: 'the coordinator is unreachable and the route fails closed.',
  },
  leaseLost: {
    status: 503,
    type: ProblemType.leaseLost,
    when: 'the request lost its lease before it could confirm; retry.',
  },
} as const satisfies Record<string, DocumentedProblem>;
