import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertNotReplayed, assertProblem, assertReplayOf } from './assertions.js';
import { order, type CaseDefinition } from './conformance-case.js';

/** Two principals that must be two scopes: the second must run, never get the first's response. */
function distinctScopes(label: string, a: unknown, b: unknown): CaseDefinition {
  return {
    name: `keeps tenants ${label} apart: one key runs once for each, never replays across`,
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/orders', { key, principal: { tenantId: a }, body: order() });
      const second = await http.post('/orders', { key, principal: { tenantId: b }, body: order() });
      assert.equal(first.status, 201, first.text);
      assert.equal(second.status, 201, second.text);
      assertNotReplayed(second);
      assert.notEqual(second.body?.id, first.body?.id);
      assert.equal(probe.executions('order-create'), 2);
      const againA = await http.post('/orders', { key, principal: { tenantId: a }, body: order() });
      assertReplayOf(againA, first);
      const againB = await http.post('/orders', { key, principal: { tenantId: b }, body: order() });
      assertReplayOf(againB, second);
      assert.equal(probe.executions('order-create'), 2);
    },
  };
}

/**
 * Issue 14, items 8 and 10: scope values are compared exactly and by type, booleans are refused,
 * and the documented way to find the principal elsewhere works.
 */
export const scopeIdentityCases: readonly CaseDefinition[] = [
  distinctScopes('"acme " and "acme"', 'acme ', 'acme'),
  distinctScopes('in NFC and NFD form', 'Zoë'.normalize('NFC'), 'Zoë'.normalize('NFD')),
  distinctScopes('7 and "7"', 7, '7'),
  {
    name: 'refuses false as a tenant id like "" and null, with nothing run or kept',
    run: async ({ http, probe, app }) => {
      // Each is a 400 problem naming the field: missing ("", null) or not a usable value (false).
      const refusals: string[] = [ProblemType.missingKeyField, ProblemType.invalidKeyInput];
      for (const tenantId of [false, '', null]) {
        const response = await http.post('/orders', {
          key: randomUUID(),
          principal: { tenantId },
          body: order(),
        });
        const shown = `tenantId ${JSON.stringify(tenantId)} got ${response.status} ${response.text}`;
        assert.equal(response.status, 400, shown);
        assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/, shown);
        assert.ok(refusals.includes(response.body?.type as string), shown);
        assert.equal(response.body?.field, 'user.tenantId', shown);
      }
      assert.equal(probe.executions('order-create'), 0);
      if (app.records) assert.equal(await app.records(), 0);
    },
  },
  {
    name: 'reads the principal through the documented extension point when it is not request.user',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const as = (tenantId: string) => ({ 'x-alt-principal': JSON.stringify({ tenantId }) });
      const first = await http.post('/orders', { key, headers: as('alt-a'), body: order() });
      assert.equal(first.status, 201, first.text);
      const replay = await http.post('/orders', { key, headers: as('alt-a'), body: order() });
      assertReplayOf(replay, first);
      const other = await http.post('/orders', { key, headers: as('alt-b'), body: order() });
      assert.equal(other.status, 201, other.text);
      assertNotReplayed(other);
      assert.equal(probe.executions('order-create'), 2);
      const nobody = await http.post('/orders', { key, body: order() });
      assertProblem(nobody, 400, ProblemType.missingKeyField);
      assert.equal(probe.executions('order-create'), 2);
    },
  },
];
