import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertProblem, assertRetryAfter, replayedCount, statuses } from './assertions.js';
import type { CaseDefinition } from './conformance-case.js';

/** SingleFlight routes: coalescing, refusal, and what is shared (issue 14, item 2). */
export const singleFlightCases: readonly CaseDefinition[] = [
  {
    name: 'coalesces 50 concurrent identical SingleFlight requests into exactly one execution',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const calls = Array.from({ length: 50 }, () => http.get(`/reports/${id}`));
      await probe.entered(`report:${id}`);
      probe.open(`report:${id}`);
      const responses = await Promise.all(calls);
      assert.equal(probe.executions(`report:${id}`), 1);
      assert.deepEqual(statuses(responses), Array(50).fill(200));
      assert.equal(new Set(responses.map((r) => r.body?.renderedBy)).size, 1);
      assert.equal(replayedCount(responses), 49);
    },
  },
  {
    name: "refuses concurrent SingleFlight duplicates with 409 and Retry-After under onBusy: 'reject'",
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const leader = http.get(`/reports/${id}/strict`);
      await probe.entered(`strict:${id}`);
      const duplicates = await Promise.all(
        Array.from({ length: 49 }, () => http.get(`/reports/${id}/strict`)),
      );
      probe.open(`strict:${id}`);
      assert.equal((await leader).status, 200);
      assert.deepEqual(statuses(duplicates), Array(49).fill(409));
      for (const duplicate of duplicates) {
        assertProblem(duplicate, 409, ProblemType.requestInFlight);
        assertRetryAfter(duplicate);
      }
      assert.equal(probe.executions(`strict:${id}`), 1);
    },
  },
  {
    name: 'shares and caches a thrown deterministic 4xx of a SingleFlight route',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const first = await http.get(`/reports/${id}/invalid`);
      const second = await http.get(`/reports/${id}/invalid`);
      assert.deepEqual(statuses([first, second]), [400, 400]);
      assert.equal(second.text, first.text);
      assert.equal(probe.executions(`invalid:${id}`), 1);
    },
  },
  {
    name: 'shares a 404 set through the platform response as 404 with concurrent callers and the cache',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const calls = Array.from({ length: 10 }, () => http.get(`/lookups/404/${id}`));
      await probe.entered(`lookup:${id}`);
      probe.open(`lookup:${id}`);
      const responses = await Promise.all(calls);
      const cached = await http.get(`/lookups/404/${id}`);
      assert.deepEqual(statuses([...responses, cached]), Array(11).fill(404));
      assert.equal(new Set([...responses, cached].map((r) => r.text)).size, 1);
      assert.equal(probe.executions(`lookup:${id}`), 1);
    },
  },
  {
    name: 'never caches a 500 set through the platform response as a success: the next call runs again',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      probe.open(`lookup:${id}`);
      const first = await http.get(`/lookups/500/${id}`);
      const second = await http.get(`/lookups/500/${id}`);
      assert.deepEqual(statuses([first, second]), [500, 500]);
      assert.equal(second.headers['idempotent-replayed'], undefined);
      assert.equal(second.body?.execution, 2);
      assert.equal(probe.executions(`lookup:${id}`), 2);
    },
  },
];
