import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertProblem, assertReplayOf } from './assertions.js';
import { order, type CaseDefinition } from './conformance-case.js';
import type { ConformanceResponse } from './conformance-client.js';
import { CONFORMANCE_ORIGIN, CONFORMANCE_SESSION_COOKIE } from './conformance-harness.js';

/** Headers helmet sets by default on every response. */
const HELMET_HEADERS = [
  'content-security-policy',
  'cross-origin-opener-policy',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
];

const fromBrowser = { origin: CONFORMANCE_ORIGIN };

/** Asserts the CORS layer answered `response`, exposing `Idempotent-Replayed` and `Retry-After`. */
function assertCors(response: ConformanceResponse): void {
  const shown = `${response.status} ${JSON.stringify(response.headers)}`;
  assert.equal(response.headers['access-control-allow-origin'], CONFORMANCE_ORIGIN, shown);
  assert.deepEqual(
    tokens(response.headers['access-control-expose-headers']),
    ['idempotent-replayed', 'retry-after'],
    shown,
  );
}

/** The comma-separated tokens of a header, lower-cased and sorted. */
function tokens(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token !== '')
    .sort();
}

/** The value of the session layer's cookie in `response`, `undefined` without exactly one. */
function sessionCookie(response: ConformanceResponse): string | undefined {
  const prefix = `${CONFORMANCE_SESSION_COOKIE}=`;
  const cookies = response.setCookie.filter((cookie) => cookie.startsWith(prefix));
  if (cookies.length !== 1) return undefined;
  return cookies[0]!.slice(prefix.length).split(';')[0];
}

/**
 * A replay is the kept answer (status, body, the headers that belong to it) with every header
 * the app's own layers produce for the replaying request: CORS, security headers, a session
 * cookie set when the response is written, request ids. The same for oncely's own refusals.
 */
export const replayHeaderCases: readonly CaseDefinition[] = [
  {
    name: 'enableCors: a replay carries Access-Control-Allow-Origin and exposes Idempotent-Replayed',
    tags: ['stored-data'],
    settings: { browserLayers: true },
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const send = () =>
        http.post('/orders', { key, tenant: 't-1', body: order(), headers: fromBrowser });
      const first = await send();
      assert.equal(first.status, 201, first.text);
      assertCors(first);
      const replay = await send();
      assertReplayOf(replay, first);
      assertCors(replay);
      assert.equal(probe.executions('order-create'), 1);
    },
  },
  {
    name: "enableCors: oncely's 409 and 422 carry Access-Control-Allow-Origin and expose Retry-After",
    settings: { browserLayers: true },
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const customer = `cors-${randomUUID()}`;
      const send = (body: unknown) =>
        http.post('/orders/slow', { key, tenant: 't-1', body, headers: fromBrowser });
      const first = send(order(customer));
      await probe.entered(`slow:${customer}`);
      const busy = await send(order(customer));
      assertProblem(busy, 409, ProblemType.requestInFlight);
      assertCors(busy);
      assert.match(busy.headers['retry-after'] ?? '', /^[1-9]\d*$/);
      probe.open(`slow:${customer}`);
      assert.equal((await first).status, 201);
      const mismatch = await send(order(`${customer}-other`));
      assertProblem(mismatch, 422, ProblemType.payloadMismatch);
      assertCors(mismatch);
      assert.equal(probe.executions('order-slow'), 1);
    },
  },
  {
    name: "enableCors: oncely's 413 in place of a response too large to keep carries Access-Control-Allow-Origin",
    settings: { browserLayers: true },
    run: async ({ http, probe }) => {
      const response = await http.post('/big', {
        key: randomUUID(),
        tenant: 't-1',
        headers: fromBrowser,
      });
      assertProblem(response, 413, ProblemType.payloadTooLarge);
      assertCors(response);
      assert.equal(response.headers['content-length'], String(response.bytes.length));
      assert.equal(probe.executions('big'), 1);
    },
  },
  {
    name: 'helmet: a replay carries the security headers of the first answer',
    tags: ['stored-data'],
    settings: { browserLayers: true },
    run: async ({ http }) => {
      const key = randomUUID();
      const send = () => http.post('/orders', { key, tenant: 't-1', body: order() });
      const first = await send();
      const replay = await send();
      assertReplayOf(replay, first);
      for (const name of HELMET_HEADERS) {
        assert.ok(first.headers[name], `helmet set no ${name} on the first answer`);
        assert.equal(replay.headers[name], first.headers[name], `${name} on the replay`);
      }
    },
  },
  {
    name: "a session cookie: a replay carries a fresh Set-Cookie of its own, never the first request's",
    tags: ['stored-data'],
    settings: { browserLayers: true },
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const send = () => http.post('/headers', { key, tenant: 't-1' });
      const first = await send();
      const firstSession = sessionCookie(first);
      assert.ok(
        firstSession,
        `no session cookie on the first answer: ${first.setCookie.join(' | ')}`,
      );
      const replay = await send();
      assertReplayOf(replay, first);
      const replaySession = sessionCookie(replay);
      assert.ok(replaySession, `no session cookie on the replay: ${replay.setCookie.join(' | ')}`);
      assert.notEqual(replaySession, firstSession);
      // The handler's own cookie belongs to the first request only.
      const handlerCookies = replay.setCookie.filter((cookie) => cookie.startsWith('session='));
      assert.equal(handlerCookies.length, 0, replay.setCookie.join(' | '));
      assert.equal(probe.executions('headers'), 1);
    },
  },
  {
    name: "a replay carries the replaying request's own X-Request-Id",
    settings: { browserLayers: true },
    run: async ({ http }) => {
      const key = randomUUID();
      const send = (id: string) =>
        http.post('/orders', {
          key,
          tenant: 't-1',
          body: order(),
          headers: { 'x-request-id': id },
        });
      const first = await send('request-1');
      assert.equal(first.headers['x-request-id'], 'request-1');
      const replay = await send('request-2');
      assertReplayOf(replay, first);
      assert.equal(replay.headers['x-request-id'], 'request-2');
    },
  },
  {
    name: "a replay merges Vary: the kept values and the layers' own, each once",
    settings: { browserLayers: true },
    run: async ({ http }) => {
      const key = randomUUID();
      const send = () => http.post('/headers', { key, tenant: 't-1', headers: fromBrowser });
      const first = await send();
      assert.deepEqual(tokens(first.headers.vary), ['accept-language', 'origin']);
      const replay = await send();
      assertReplayOf(replay, first);
      assert.deepEqual(tokens(replay.headers.vary), tokens(first.headers.vary));
      assertCors(replay);
    },
  },
  {
    name: "a SingleFlight result shared or cached carries the request's own CORS, security headers and session cookie",
    settings: { browserLayers: true },
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const first = await http.get(`/users/${id}`, { headers: fromBrowser });
      const cached = await http.get(`/users/${id}`, { headers: fromBrowser });
      assert.equal(first.status, 200, first.text);
      assertReplayOf(cached, first);
      assertCors(cached);
      for (const name of HELMET_HEADERS) assert.equal(cached.headers[name], first.headers[name]);
      const session = sessionCookie(cached);
      assert.ok(session, `no session cookie on the cached result: ${cached.setCookie.join(' | ')}`);
      assert.notEqual(session, sessionCookie(first));
      assert.equal(probe.executions(`user-read:${id}`), 1);
    },
  },
  {
    name: 'a conditional GET answered from a kept result gets 304 when its ETag matches, as a first answer would',
    settings: { browserLayers: true },
    run: async ({ http }) => {
      const id = randomUUID();
      const first = await http.get(`/users/${id}`, { headers: fromBrowser });
      assert.equal(first.status, 200, first.text);
      const etag = first.headers.etag;
      const conditional = await http.get(`/users/${id}`, {
        // fetch adds `Cache-Control: no-cache` (a reload, never fresh) unless one is sent.
        headers: {
          ...fromBrowser,
          'if-none-match': etag ?? '"none"',
          'cache-control': 'max-age=0',
        },
      });
      assert.equal(conditional.headers['idempotent-replayed'], 'true');
      if (etag === undefined) {
        // The platform sets no ETag of its own (Fastify): nothing to match, the answer is whole.
        assertReplayOf(conditional, first);
        return;
      }
      assert.equal(conditional.status, 304, conditional.text);
      assert.equal(conditional.text, '');
      assert.equal(conditional.headers.etag, etag);
      assertCors(conditional);
    },
  },
];
