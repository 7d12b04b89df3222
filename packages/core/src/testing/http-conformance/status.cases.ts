import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertNotReplayed, assertReplayOf, statuses } from './assertions.js';
import type { CaseDefinition } from './conformance-case.js';

const KEPT = [200, 201, 204, 400, 404, 410, 422];
const NOT_KEPT = [500, 502, 503, 408, 409, 425, 429];

/**
 * Issue 14, item 2: what is kept is the status the client received, however the handler set it
 * (through the platform response), and the storage policy judges that status.
 */
export const statusCases: readonly CaseDefinition[] = [
  ...KEPT.map((code): CaseDefinition => ({
    name: `keeps a ${code} set through the platform response and replays it as ${code}`,
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const first = await http.post(`/statuses/${code}`, { key, tenant: 't-1' });
      const second = await http.post(`/statuses/${code}`, { key, tenant: 't-1' });
      assert.equal(first.status, code, `the client got ${first.status}: ${first.text}`);
      assertNotReplayed(first);
      assertReplayOf(second, first);
      assert.equal(probe.executions(`status:${code}`), 1);
      if (app.records) assert.equal(await app.records(), 1);
    },
  })),
  ...NOT_KEPT.map((code): CaseDefinition => ({
    name: `does not keep a ${code} set through the platform response: the retry runs again`,
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const first = await http.post(`/statuses/${code}`, { key, tenant: 't-1' });
      const second = await http.post(`/statuses/${code}`, { key, tenant: 't-1' });
      assert.deepEqual(statuses([first, second]), [code, code]);
      assertNotReplayed(second);
      assert.deepEqual(second.body, { execution: 2 });
      assert.equal(probe.executions(`status:${code}`), 2);
      if (app.records) assert.equal(await app.records(), 0);
    },
  })),
  {
    name: 'does not keep a thrown 500: the retry runs the handler again and its success is kept',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const failed = await http.post('/flaky', { key, tenant: 't-1' });
      assert.equal(failed.status, 500);
      const retried = await http.post('/flaky', { key, tenant: 't-1' });
      assert.equal(retried.status, 201);
      assert.deepEqual(retried.body, { execution: 2 });
      assertNotReplayed(retried);
      const replay = await http.post('/flaky', { key, tenant: 't-1' });
      assertReplayOf(replay, retried);
      assert.equal(probe.executions('flaky'), 2);
    },
  },
  {
    name: 'does not keep a thrown 400: the catch-all answers it and the retry runs again',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/rejected', { key, tenant: 't-1' });
      const second = await http.post('/rejected', { key, tenant: 't-1' });
      assert.deepEqual(statuses([first, second]), [400, 400]);
      assert.equal(first.body?.execution, 1);
      assert.equal(second.body?.execution, 2);
      assertNotReplayed(second);
      assert.equal(probe.executions('rejected'), 2);
    },
  },
  {
    name: 'does not keep an error passed to next(error): the retry runs again',
    needs: ['next-error'],
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const first = await http.post('/next-error', { key, tenant: 't-1' });
      const second = await http.post('/next-error', { key, tenant: 't-1' });
      assert.deepEqual(statuses([first, second]), [422, 422]);
      assert.equal(first.body?.execution, 1);
      assert.equal(second.body?.execution, 2);
      assertNotReplayed(second);
      assert.equal(probe.executions('next-error'), 2);
      if (app.records) assert.equal(await app.records(), 0);
    },
  },
];
