import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertNotReplayed, assertReplayOf } from './assertions.js';
import { ConformanceClient } from './conformance-client.js';
import type { CaseDefinition } from './conformance-case.js';

/** Issue 14, item 9: one operation, one route, unless every route claiming it says `shared: true`. */
export const bootCases: readonly CaseDefinition[] = [
  {
    name: 'refuses to boot when two routes claim one operation with identical options, naming both',
    settings: { collidingRoutes: 'unmarked' },
    boot: async (harness, settings) => {
      let app: Awaited<ReturnType<typeof harness.start>> | undefined;
      try {
        app = await harness.start(settings);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        for (const route of harness.collisionRouteNames) {
          assert.ok(
            message.includes(route),
            `the start-up error does not name ${route}: ${message}`,
          );
        }
        assert.match(message, /collision/);
        return;
      } finally {
        settings.probe.openAll();
        await app?.close();
      }
      assert.fail('the app booted with two routes claiming the operation "collision"');
    },
  },
  {
    name: 'boots two routes sharing one operation when both say shared: true, and they share records',
    settings: { collidingRoutes: 'shared' },
    boot: async (harness, settings) => {
      const app = await harness.start(settings);
      try {
        const http = new ConformanceClient(app);
        const key = randomUUID();
        const a = await http.post('/collisions/a', { key, tenant: 't-1' });
        const b = await http.post('/collisions/b', { key, tenant: 't-1' });
        assert.equal(a.status, 201, a.text);
        assertNotReplayed(a);
        assertReplayOf(b, a);
        assert.equal(a.body?.route, 'a');
        assert.equal(settings.probe.executions('collision'), 1);
      } finally {
        settings.probe.openAll();
        await app.close();
      }
    },
  },
];
