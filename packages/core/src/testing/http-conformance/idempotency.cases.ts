import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import {
  assertNotReplayed,
  assertProblem,
  assertReplayOf,
  replayedCount,
  statuses,
} from './assertions.js';
import { duplicateWhileInFlight, order, type CaseDefinition } from './conformance-case.js';

/** Today's idempotent-route behaviour: replay, keys, refusals, concurrency. */
export const idempotencyCases: readonly CaseDefinition[] = [
  {
    name: 'executes once, then replays status, body bytes and replay headers with Idempotent-Replayed',
    tags: ['stored-data'],
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/orders', { key, tenant: 't-1', body: order() });
      assert.equal(first.status, 201);
      assertNotReplayed(first);
      assert.equal(first.headers.location, '/orders/latest');
      assert.equal(first.body?.execution, 1);
      assert.equal(first.body?.customer, 'c-1');
      assert.equal(first.body?.lines, 1);

      const replay = await http.post('/orders', { key, tenant: 't-1', body: order() });
      assertReplayOf(replay, first);
      assert.equal(replay.headers.location, '/orders/latest');
      assert.equal(replay.headers['content-type'], first.headers['content-type']);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: 'accepts the key as a structured-field string: "k" and k are one key',
    run: async ({ http, probe }) => {
      const key = `k-${randomUUID()}`;
      const quoted = await http.post('/orders', { key: `"${key}"`, tenant: 't-1', body: order() });
      const bare = await http.post('/orders', { key, tenant: 't-1', body: order() });
      assert.equal(quoted.status, 201);
      assertReplayOf(bare, quoted);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: 'answers 400 problem+json naming the header when the required key is missing',
    run: async ({ http, probe }) => {
      const response = await http.post('/orders', { tenant: 't-1', body: order() });
      assertProblem(response, 400, ProblemType.idempotencyKeyMissing);
      assert.equal(response.body?.status, 400);
      assert.equal(response.body?.header, 'idempotency-key');
      assert.match(String(response.body?.detail), /requires the "idempotency-key" header/);
      assert.equal(probe.executions('order-create'), 0);
    },
  },
  ...[
    ['too long', 'k'.repeat(256)],
    ['not a token', 'two words'],
    ['a quoted value that is not an sf-string', '"unterminated'],
  ].map(([label, key]): CaseDefinition => ({
    name: `answers 400 problem+json for a malformed key (${label})`,
    run: async ({ http, probe }) => {
      const response = await http.post('/orders', { key, tenant: 't-1', body: order() });
      assertProblem(response, 400, ProblemType.idempotencyKeyMalformed);
      assert.equal(probe.executions('order-create'), 0);
    },
  })),
  {
    name: 'answers 400 naming the missing scope field when there is no principal',
    run: async ({ http, probe }) => {
      const response = await http.post('/orders', { key: randomUUID(), body: order() });
      assertProblem(response, 400, ProblemType.missingKeyField);
      assert.equal(response.body?.field, 'user.tenantId');
      assert.equal(probe.executions('order-create'), 0);
    },
  },
  {
    name: 'answers 401 where the route says a missing principal is unauthenticated',
    run: async ({ http, probe }) => {
      const response = await http.post('/orders/payments', { body: order() });
      assertProblem(response, 401, ProblemType.unauthenticated);
      assert.equal(probe.executions('payment'), 0);
    },
  },
  {
    name: 'answers 422 when the key is reused with another payload, and keeps the record',
    tags: ['stored-data'],
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/orders', { key, tenant: 't-1', body: order('first') });
      const other = await http.post('/orders', { key, tenant: 't-1', body: order('second') });
      assertProblem(other, 422, ProblemType.payloadMismatch);
      const replay = await http.post('/orders', { key, tenant: 't-1', body: order('first') });
      assertReplayOf(replay, first);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: 'leaves @KeyIgnore() properties out of the payload comparison',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const sentAt = (clientSentAt: string) => ({ ...order('ki'), clientSentAt });
      const first = await http.post('/orders', {
        key,
        tenant: 't-1',
        body: sentAt('2026-01-01T00:00:00Z'),
      });
      const second = await http.post('/orders', {
        key,
        tenant: 't-1',
        body: sentAt('2026-02-02T10:10:10Z'),
      });
      assert.equal(first.status, 201, first.text);
      assertReplayOf(second, first);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: 'keys ignore transport headers: trace ids and timestamps do not change the key',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/orders', {
        key,
        tenant: 't-1',
        body: order('transport'),
        headers: {
          'x-request-id': 'trace-1',
          traceparent: '00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01',
          'x-sent-at': '2026-01-01T00:00:00Z',
        },
      });
      const second = await http.post('/orders', {
        key,
        tenant: 't-1',
        body: order('transport'),
        headers: {
          'x-request-id': 'trace-2',
          traceparent: '00-cccccccccccccccccccccccccccccccc-dddddddddddddddd-01',
          'x-sent-at': '2026-02-02T10:10:10Z',
        },
      });
      assertReplayOf(second, first);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: 'isolates tenants: one key from two tenants runs twice and never replays across',
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const a = await http.post('/orders', { key, tenant: 'tenant-a', body: order('iso') });
      const b = await http.post('/orders', { key, tenant: 'tenant-b', body: order('iso') });
      assert.deepEqual(statuses([a, b]), [201, 201]);
      assertNotReplayed(b);
      assert.notEqual(b.body?.id, a.body?.id);
      assert.equal(probe.executions('order-create'), 2);
      const againA = await http.post('/orders', { key, tenant: 'tenant-a', body: order('iso') });
      assertReplayOf(againA, a);
      if (app.records) assert.equal(await app.records(), 2);
    },
  },
  {
    name: 'answers 409 with Retry-After while the first request is in flight, then replays',
    tags: ['stored-data'],
    run: async (context) => {
      const { first, duplicate, send, release } = await duplicateWhileInFlight(context, 'inflight');
      assertProblem(duplicate, 409, ProblemType.requestInFlight);
      assert.match(duplicate.headers['retry-after'] ?? '', /^[1-9]\d*$/);
      release();
      const done = await first;
      assert.equal(done.status, 201);
      assertReplayOf(await send(), done);
      assert.equal(context.probe.executions('order-slow'), 1);
    },
  },
  {
    name: 'refuses 49 concurrent duplicates of one idempotent request with 409, running it once',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const customer = `rush-${randomUUID()}`;
      const send = () => http.post('/orders/slow', { key, tenant: 't-1', body: order(customer) });
      const first = send();
      await probe.entered(`slow:${customer}`);
      const duplicates = await Promise.all(Array.from({ length: 49 }, send));
      probe.open(`slow:${customer}`);
      assert.equal((await first).status, 201);
      assert.deepEqual(statuses(duplicates), Array(49).fill(409));
      assert.equal(probe.executions('order-slow'), 1);
    },
  },
  {
    name: "answers 50 concurrent identical requests with one execution under onBusy: 'wait'",
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const customer = `crowd-${randomUUID()}`;
      const calls = Array.from({ length: 50 }, () =>
        http.post('/orders/slow-wait', { key, tenant: 't-1', body: order(customer) }),
      );
      await probe.entered(`slow-wait:${customer}`);
      probe.open(`slow-wait:${customer}`);
      const responses = await Promise.all(calls);
      assert.equal(probe.executions('order-slow-wait'), 1);
      assert.deepEqual(statuses(responses), Array(50).fill(201));
      assert.equal(new Set(responses.map((r) => r.body?.id)).size, 1);
      assert.equal(replayedCount(responses), 49);
    },
  },
  {
    name: 'replays the stored status on another route sharing the operation (shared: true)',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const v1 = await http.post('/refunds/v1', { key, tenant: 't-1' });
      const v2 = await http.post('/refunds/v2', { key, tenant: 't-1' });
      assert.equal(v1.status, 201);
      assertReplayOf(v2, v1);
      assert.match(v2.headers['content-type'] ?? '', /^application\/json/);
      assert.equal(v2.body?.version, 1);
      assert.equal(probe.executions('refund'), 1);
    },
  },
  {
    name: 'replays a binary body byte for byte',
    needs: ['binary-body'],
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/bytes', { key, tenant: 't-1' });
      const replay = await http.post('/bytes', { key, tenant: 't-1' });
      assert.equal(first.bytes.length, 4096);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.status, first.status);
      assert.equal(replay.headers['content-type'], first.headers['content-type']);
      assert.equal(Buffer.compare(replay.bytes, first.bytes), 0);
      assert.equal(probe.executions('bytes'), 1);
    },
  },
  {
    name: 'replays the default and allowlisted headers, never Set-Cookie or other headers',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const first = await http.post('/headers', { key, tenant: 't-1' });
      assert.equal(first.setCookie.length, 1);
      assert.equal(first.headers['x-debug'], 'per-response');
      const replay = await http.post('/headers', { key, tenant: 't-1' });
      assertReplayOf(replay, first);
      assert.equal(replay.headers.etag, '"v1"');
      assert.equal(replay.headers['x-order-version'], '7');
      assert.equal(
        replay.setCookie.length,
        0,
        `replayed Set-Cookie: ${replay.setCookie.join('; ')}`,
      );
      assert.equal(replay.headers['x-debug'], undefined);
      assert.equal(probe.executions('headers'), 1);
    },
  },
  {
    name: 'answers 413 when the response is larger than the route keeps, and keeps that answer: its retry replays it, 1 execution',
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const recordsBefore = await app.records?.();
      const response = await http.post('/big', { key, tenant: 't-1' });
      assertProblem(response, 413, ProblemType.payloadTooLarge);
      if (recordsBefore !== undefined) assert.equal(await app.records?.(), recordsBefore + 1);
      const retry = await http.post('/big', { key, tenant: 't-1' });
      assertReplayOf(retry, response);
      assert.equal(probe.executions('big'), 1);
    },
  },
];
