import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertProblem, assertReplayOf, statuses } from './assertions.js';
import type { ConformanceResponse } from './conformance-client.js';
import { eventually, type CaseDefinition } from './conformance-case.js';
import { CONFORMANCE_SECRET } from './conformance-harness.js';

/** The user view as the app's serializer sends it. */
function assertSerializedUser(response: ConformanceResponse, name: string): void {
  const body = response.body ?? {};
  assert.deepEqual(Object.keys(body).sort(), ['displayName', 'id', 'name'], response.text);
  assert.equal(body.name, name);
  assert.equal(body.displayName, `${name} (${String(body.id).slice(0, 4)})`);
  assert.ok(!response.text.includes(CONFORMANCE_SECRET), 'the client got the password hash');
}

async function assertSecretNeverStored(storedText: (() => Promise<string>) | undefined) {
  if (!storedText) return;
  const stored = await storedText();
  assert.ok(stored.length > 0, 'nothing was stored at all');
  assert.ok(!stored.includes(CONFORMANCE_SECRET), 'the password hash was written to storage');
  assert.ok(!stored.includes('passwordHash'), 'the excluded field was written to storage');
}

/**
 * Issue 14, items 1 and 3: what is kept is what the client received after the app's serializer,
 * and a key stays held until the handler itself settles, whatever the timeout layer answered or
 * the client did.
 */
export const serializerCases: readonly CaseDefinition[] = [
  {
    name: "replays exactly what the app's serializer sent: no excluded field, the exposed getter kept",
    perSerializer: true,
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const first = await http.post('/users', { key, tenant: 't-1', body: { name: 'Ada' } });
      assert.equal(first.status, 201);
      assertSerializedUser(first, 'Ada');
      const replay = await http.post('/users', { key, tenant: 't-1', body: { name: 'Ada' } });
      assertReplayOf(replay, first);
      assertSerializedUser(replay, 'Ada');
      assert.equal(probe.executions('user-create'), 1);
      await assertSecretNeverStored(app.storedText?.bind(app));
    },
  },
  {
    name: "shares and caches exactly what the app's serializer sent on a SingleFlight route",
    perSerializer: true,
    run: async ({ http, probe, app }) => {
      const id = randomUUID();
      const first = await http.get(`/users/${id}`);
      const cached = await http.get(`/users/${id}`);
      assert.deepEqual(statuses([first, cached]), [200, 200]);
      assertSerializedUser(first, 'Ada');
      assert.equal(cached.headers['idempotent-replayed'], 'true');
      assert.equal(cached.text, first.text);
      assert.equal(probe.executions(`user-read:${id}`), 1);
      await assertSecretNeverStored(app.storedText?.bind(app));
    },
  },
  {
    name: 'holds the key until the handler settles when the timeout layer answers first: one execution, then the serialized replay',
    settings: { timeoutLayer: true },
    needs: ['outer-answer-detection'],
    run: async ({ http, probe, harness, app }) => {
      const key = randomUUID();
      const send = () => http.post('/slow-users', { key, tenant: 't-1', body: { name: 'Slow' } });
      const timedOut = await send();
      assert.equal(timedOut.status, harness.timeoutStatus, timedOut.text);
      await probe.entered('slow-user:Slow');
      const duplicates = [await send(), await send()];
      for (const duplicate of duplicates) {
        assertProblem(duplicate, 409, ProblemType.requestInFlight);
      }
      assert.equal(probe.executions('slow-user'), 1);
      probe.open('slow-user:Slow');
      const replay = await eventually(send, (response) => response.status !== 409);
      assert.equal(replay.status, 201, replay.text);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assertSerializedUser(replay, 'Slow');
      const again = await send();
      assertReplayOf(again, replay);
      assert.equal(probe.executions('slow-user'), 1);
      await assertSecretNeverStored(app.storedText?.bind(app));
    },
  },
  {
    name: 'holds the key until the handler settles when the client disconnects: one execution, then the serialized replay',
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const send = (signal?: AbortSignal) =>
        http.post('/slow-users', { key, tenant: 't-1', body: { name: 'Gone' }, signal });
      const client = new AbortController();
      const left = send(client.signal);
      await probe.entered('slow-user:Gone');
      client.abort();
      await assert.rejects(left);
      const duplicate = await send();
      assertProblem(duplicate, 409, ProblemType.requestInFlight);
      probe.open('slow-user:Gone');
      const replay = await eventually(send, (response) => response.status !== 409);
      assert.equal(replay.status, 201, replay.text);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assertSerializedUser(replay, 'Gone');
      assert.equal(probe.executions('slow-user'), 1);
      await assertSecretNeverStored(app.storedText?.bind(app));
    },
  },
];
