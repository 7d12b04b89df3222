import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertNotReplayed, assertProblem, assertReplayOf } from './assertions.js';
import { order, type CaseDefinition } from './conformance-case.js';

/** Body validation before any key exists, and issue 14, item 11: the app's own settings. */
export const validationCases: readonly CaseDefinition[] = [
  {
    name: 'answers 400 listing the invalid properties before any key, lock or record exists',
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const invalid = await http.post('/orders', {
        key,
        tenant: 't-1',
        body: { customer: '', lines: [{ sku: 'a', quantity: 0 }] },
      });
      assertProblem(invalid, 400, ProblemType.invalidBody);
      const errors = invalid.body?.errors as { property: string }[] | undefined;
      assert.deepEqual(errors?.map((error) => error.property).sort(), [
        'customer',
        'lines.0.quantity',
      ]);
      if (app.records) assert.equal(await app.records(), 0);
      // Nothing was recorded: the same key with a valid body runs normally (no 422, no replay).
      const valid = await http.post('/orders', {
        key,
        tenant: 't-1',
        body: order('after-invalid'),
      });
      assert.equal(valid.status, 201);
      assertNotReplayed(valid);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: "a retry carrying a field the app's validation strips is replayed, not refused with 422",
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/orders', { key, tenant: 't-1', body: order('strip') });
      const retry = await http.post('/orders', {
        key,
        tenant: 't-1',
        body: { ...order('strip'), note: 'added by a newer client' },
      });
      assert.equal(retry.status, 201, `the retry got ${retry.status}: ${retry.text}`);
      assertReplayOf(retry, first);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: 'answers 429 problem+json past the per-tenant record quota, still replays, and keeps tenants apart',
    settings: { recordQuota: { limit: 2, windowMs: 3_600_000 } },
    run: async ({ http, probe }) => {
      const pay = (tenant: string, key: string) =>
        http.post('/pay', { key, tenant, body: { orderId: 'o-1', amount: '10.00' } });
      assert.equal((await pay('a', 'k1')).status, 201);
      assert.equal((await pay('a', 'k2')).status, 201);
      const refused = await pay('a', 'k3');
      assertProblem(refused, 429, ProblemType.recordQuotaExceeded);
      assert.match(refused.headers['retry-after'] ?? '', /^\d+$/);
      const replay = await pay('a', 'k1');
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal((await pay('b', 'k3')).status, 201);
      assert.equal(probe.executions('pay'), 3);
    },
  },
  {
    name: 'never refuses a retry for the quota: a request answered 500 is retried past the limit and runs',
    settings: { recordQuota: { limit: 1, windowMs: 3_600_000 } },
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const failed = await http.post('/flaky', { key, tenant: 't-1' });
      assert.equal(failed.status, 500);
      // The tenant's one record of this window is that request's: a new one is refused …
      const other = await http.post('/pay', {
        key: randomUUID(),
        tenant: 't-1',
        body: { orderId: 'o-1', amount: '10.00' },
      });
      assertProblem(other, 429, ProblemType.recordQuotaExceeded);
      // … its retry is not: it already holds its place in the quota.
      const retried = await http.post('/flaky', { key, tenant: 't-1' });
      assert.equal(retried.status, 201, `the retry got ${retried.status}: ${retried.text}`);
      const replay = await http.post('/flaky', { key, tenant: 't-1' });
      assertReplayOf(replay, retried);
      assert.equal(probe.executions('flaky'), 2);
      assert.equal(probe.executions('pay'), 0);
    },
  },
];
