import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertReplayOf } from './assertions.js';
import type { ConformanceResponse } from './conformance-client.js';
import type { CaseDefinition, CaseContext } from './conformance-case.js';

/**
 * A response is captured whole or refused whole before anything is sent: either the client got
 * every byte and its retry replays them, or it got one problem response, which is what the key
 * keeps (the handler ran), and its retry replays that.
 */
async function assertWholeOrRefused(
  { http, probe, app }: CaseContext,
  path: string,
  operation: string,
  whole: (first: ConformanceResponse) => void,
): Promise<void> {
  const key = randomUUID();
  const recordsBefore = await app.records?.();
  const first = await http.post(path, { key, tenant: 't-1' });
  const retry = await http.post(path, { key, tenant: 't-1' });
  if (first.status < 400) {
    whole(first);
  } else {
    assert.match(first.headers['content-type'] ?? '', /^application\/problem\+json/, first.text);
    assert.equal(typeof first.body?.type, 'string', first.text);
  }
  assertReplayOf(retry, first);
  assert.equal(probe.executions(operation), 1);
  if (recordsBefore !== undefined) assert.equal(await app.records?.(), recordsBefore + 1);
  const alive = await http.post('/orders', {
    key: randomUUID(),
    tenant: 't-1',
    body: { customer: 'after', lines: [{ sku: 's', quantity: 1 }] },
  });
  assert.equal(alive.status, 201, 'the app stopped answering after the misbehaving handler');
}

/** Issue 14, item 6: handlers that write the platform response themselves. */
export const rawResponseCases: readonly CaseDefinition[] = [
  {
    name: 'a response written in several chunks is captured whole or refused whole, never corrupted',
    needs: ['raw-response-writes'],
    run: (context) =>
      assertWholeOrRefused(context, '/chunks', 'chunks', (first) => {
        assert.equal(first.text, '{"a":1}');
        assert.match(first.headers['content-type'] ?? '', /^application\/json/);
      }),
  },
  {
    name: 'a handler answering twice (res.json twice) neither crashes the app nor lets client and replay disagree',
    needs: ['raw-response-writes'],
    run: (context) =>
      assertWholeOrRefused(context, '/double-json', 'double-json', (first) => {
        assert.deepEqual(first.body, { n: 1 });
      }),
  },
  {
    name: 'an error passed on after res.json neither crashes the app nor lets client and replay disagree',
    needs: ['raw-response-writes'],
    run: (context) =>
      assertWholeOrRefused(context, '/json-then-error', 'json-then-error', (first) => {
        assert.deepEqual(first.body, { ok: true });
      }),
  },
  {
    name: 'a streamed response is captured whole or refused whole, never half-sent',
    needs: ['raw-response-writes'],
    run: (context) =>
      assertWholeOrRefused(context, '/stream', 'stream', (first) => {
        assert.equal(first.text, 'part 1part 2');
      }),
  },
];
