import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertNotReplayed, assertReplayOf } from './assertions.js';
import type { ConformanceResponse } from './conformance-client.js';
import type { CaseDefinition } from './conformance-case.js';
import { CONFORMANCE_SECRET } from './conformance-harness.js';

/** A replay the client cannot tell from the first response: status, bytes, content headers. */
function assertByteIdenticalReplay(replay: ConformanceResponse, first: ConformanceResponse): void {
  assertReplayOf(replay, first);
  assert.ok(replay.bytes.equals(first.bytes), 'the replayed body bytes differ');
  assert.equal(replay.headers['content-type'], first.headers['content-type']);
  assert.equal(replay.headers['content-length'], first.headers['content-length']);
}

/**
 * Encryption at rest, read from the storage itself: the stored rows and keys carry no plaintext
 * of what the client received nor of what it sent, yet replays are byte for byte the first
 * response. Identities (tenant, key, target) stay in clear by design and are not looked for.
 */
export const encryptedStorageCases: readonly CaseDefinition[] = [
  {
    name: 'stores no plaintext of a response body or request secret when encryption is on, and replays byte for byte',
    needs: ['encrypted-storage', 'storage-inspection'],
    tags: ['stored-data'],
    run: async ({ http, probe, app }) => {
      // Sent only in the request: a bearer token and a body field that never comes back.
      const token = `tok-${randomUUID()}`;
      const cardNumber = `card-${randomUUID()}`;
      // Sent in the request and echoed in the response body.
      const name = `Ada-${randomUUID()}`;
      const headers = { authorization: `Bearer ${token}` };

      const userKey = randomUUID();
      const created = await http.post('/users', {
        key: userKey,
        tenant: 't-enc',
        headers,
        body: { name },
      });
      assert.equal(created.status, 201, created.text);
      assertNotReplayed(created);
      const createdAgain = await http.post('/users', {
        key: userKey,
        tenant: 't-enc',
        headers,
        body: { name },
      });
      assertByteIdenticalReplay(createdAgain, created);

      const echoKey = randomUUID();
      const echoBody = { cardNumber, note: `note-${randomUUID()}` };
      const echoed = await http.post('/echo', {
        key: echoKey,
        tenant: 't-enc',
        headers,
        body: echoBody,
      });
      assert.equal(echoed.status, 201, echoed.text);
      const echoedAgain = await http.post('/echo', {
        key: echoKey,
        tenant: 't-enc',
        headers,
        body: echoBody,
      });
      assertByteIdenticalReplay(echoedAgain, echoed);

      const userId = randomUUID();
      const read = await http.get(`/users/${userId}`, { headers });
      const cached = await http.get(`/users/${userId}`, { headers });
      assert.equal(read.status, 200, read.text);
      assert.equal(cached.headers['idempotent-replayed'], 'true');
      assert.ok(cached.bytes.equals(read.bytes), 'the cached result bytes differ');

      assert.equal(probe.executions('user-create'), 1);
      assert.equal(probe.executions('echo'), 1);
      assert.equal(probe.executions(`user-read:${userId}`), 1);
      assert.equal(await app.records?.(), 2);

      const stored = (await app.storedText?.()) ?? '';
      assert.ok(stored.length > 0, 'nothing was read back from storage');
      const plaintexts: [string, string][] = [
        ['a created user body', created.text],
        ['the created user id', String(created.body?.id)],
        ['the name sent and echoed', name],
        ['the exposed displayName', String(created.body?.displayName)],
        ['the displayName property', '"displayName"'],
        ['an echo body', echoed.text],
        ['a cached SingleFlight body', read.text],
        ['the SingleFlight displayName', String(read.body?.displayName)],
        ['the bearer token', token],
        ['the card number', cardNumber],
        ['the excluded password hash', CONFORMANCE_SECRET],
      ];
      for (const [what, plaintext] of plaintexts) {
        assert.ok(!stored.includes(plaintext), `${what} is stored in plaintext: ${plaintext}`);
      }
    },
  },
];
