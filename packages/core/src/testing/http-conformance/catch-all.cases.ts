import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertProblem, assertReplayOf, assertRetryAfter } from './assertions.js';
import { duplicateWhileInFlight, order, type CaseDefinition } from './conformance-case.js';

/**
 * Issue 14, item 7: oncely's own refusals keep their headers and problem body under the app's
 * catch-all error handler, in every way the framework registers one.
 */
export const catchAllCases: readonly CaseDefinition[] = [
  {
    name: 'a 409 keeps Retry-After and its problem type under the catch-all error handler',
    perCatchAll: true,
    run: async (context) => {
      const { first, duplicate, release } = await duplicateWhileInFlight(context, 'caught');
      assertProblem(duplicate, 409, ProblemType.requestInFlight);
      assertRetryAfter(duplicate);
      release();
      assert.equal((await first).status, 201);
    },
  },
  {
    name: 'a 400 and a 422 of oncely keep their problem body under the catch-all error handler',
    perCatchAll: true,
    run: async ({ http }) => {
      const missing = await http.post('/orders', { tenant: 't-1', body: order() });
      assertProblem(missing, 400, ProblemType.idempotencyKeyMissing);
      const key = randomUUID();
      await http.post('/orders', { key, tenant: 't-1', body: order('a') });
      const mismatch = await http.post('/orders', { key, tenant: 't-1', body: order('b') });
      assertProblem(mismatch, 422, ProblemType.payloadMismatch);
    },
  },
  {
    name: 'a 503 lease-lost keeps Retry-After under the catch-all error handler',
    perCatchAll: true,
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const leader = http.post('/hung', { key, tenant: 't-1' });
      await probe.entered('hung:1');
      const waiter = await http.post('/hung', { key, tenant: 't-1' });
      assertProblem(waiter, 503, ProblemType.leaseLost);
      assertRetryAfter(waiter);
      await leader;
    },
  },
  {
    name: 'a replay keeps Idempotent-Replayed under the catch-all error handler',
    perCatchAll: true,
    run: async ({ http }) => {
      const key = randomUUID();
      const first = await http.post('/orders', { key, tenant: 't-1', body: order() });
      const replay = await http.post('/orders', { key, tenant: 't-1', body: order() });
      assertReplayOf(replay, first);
    },
  },
];
