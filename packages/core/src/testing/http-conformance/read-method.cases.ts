import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertNotReplayed, assertReplayOf } from './assertions.js';
import type { CaseDefinition } from './conformance-case.js';
import type { ConformanceResponse } from './conformance-client.js';

/** A CORS preflight as a browser sends it before a cross-origin GET with a custom header. */
const PREFLIGHT_HEADERS = {
  origin: 'https://app.example',
  'access-control-request-method': 'GET',
  'access-control-request-headers': 'idempotency-key',
};

/** A HEAD answer is a GET's status and headers, without a byte of body. */
function assertHeadOf(head: ConformanceResponse, get: ConformanceResponse): void {
  assert.equal(head.status, get.status);
  assert.equal(head.bytes.length, 0);
  assert.equal(head.headers['content-length'], String(get.bytes.length));
  assert.equal(head.headers['content-type'], get.headers['content-type']);
}

/** A HEAD answered from a kept GET: its headers, validators included, marked as a replay. */
function assertHeadReplayOf(head: ConformanceResponse, get: ConformanceResponse): void {
  assertHeadOf(head, get);
  assert.equal(head.headers['idempotent-replayed'], 'true');
  assert.equal(head.headers.etag, get.headers.etag);
}

/**
 * HEAD and OPTIONS on protected routes: a HEAD is answered from what a GET kept (or runs
 * unprotected), never keeping anything a GET would replay; an OPTIONS preflight is never
 * protected.
 */
export const readMethodCases: readonly CaseDefinition[] = [
  {
    name: 'HEAD then GET on a SingleFlight GET route: the HEAD keeps nothing, the GET runs and keeps its full body',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const head = await http.send('HEAD', `/users/${id}`, {});
      const get = await http.get(`/users/${id}`);
      const again = await http.get(`/users/${id}`);
      assertNotReplayed(head);
      assertNotReplayed(get);
      assert.equal(get.status, 200);
      assert.equal(get.body?.id, id);
      assert.equal(get.body?.name, 'Ada');
      assertHeadOf(head, get);
      assertReplayOf(again, get);
      assert.equal(probe.executions(`user-read:${id}`), 2);
    },
  },
  {
    name: 'GET then HEAD on a SingleFlight GET route: the HEAD answers the kept status and headers with no body, running nothing',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const get = await http.get(`/users/${id}`);
      const head = await http.send('HEAD', `/users/${id}`, {});
      const again = await http.get(`/users/${id}`);
      assert.equal(get.status, 200);
      assertHeadReplayOf(head, get);
      assertReplayOf(again, get);
      assert.equal(probe.executions(`user-read:${id}`), 1);
    },
  },
  {
    name: 'a HEAD while a SingleFlight GET runs shares its status and headers, with no body: 1 execution',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const get = http.get(`/reports/${id}`);
      await probe.entered(`report:${id}`);
      const head = http.send('HEAD', `/reports/${id}`, {});
      await probe.arrived(`/reports/${id}`, 2);
      probe.open(`report:${id}`);
      const [got, headed] = await Promise.all([get, head]);
      assertNotReplayed(got);
      assertHeadReplayOf(headed, got);
      assert.equal(probe.executions(`report:${id}`), 1);
    },
  },
  {
    name: 'HEAD then GET on an idempotent GET route: the HEAD keeps nothing, the GET runs and keeps its full body',
    tags: ['stored-data'],
    run: async ({ app, http, probe }) => {
      const id = randomUUID();
      const request = { key: randomUUID(), tenant: 't-1' };
      const head = await http.send('HEAD', `/exports/${id}`, request);
      const get = await http.get(`/exports/${id}`, request);
      const again = await http.get(`/exports/${id}`, request);
      assertNotReplayed(head);
      assertNotReplayed(get);
      assert.equal(get.status, 200);
      assert.deepEqual(get.body, { id, execution: 2 });
      assertHeadOf(head, get);
      assertReplayOf(again, get);
      assert.equal(probe.executions(`export:${id}`), 2);
      if (app.records) assert.equal(await app.records(), 1);
    },
  },
  {
    name: 'GET then HEAD on an idempotent GET route: the HEAD answers the kept status and headers with no body, running nothing',
    tags: ['stored-data'],
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const request = { key: randomUUID(), tenant: 't-1' };
      const get = await http.get(`/exports/${id}`, request);
      const head = await http.send('HEAD', `/exports/${id}`, request);
      const again = await http.get(`/exports/${id}`, request);
      assert.deepEqual(get.body, { id, execution: 1 });
      assertHeadReplayOf(head, get);
      assertReplayOf(again, get);
      assert.equal(probe.executions(`export:${id}`), 1);
    },
  },
  {
    name: 'a CORS preflight takes no lock and keeps nothing',
    run: async ({ app, http, probe }) => {
      const id = randomUUID();
      const path = `/preflights/${id}`;
      const preflight = http.send('OPTIONS', path, { headers: PREFLIGHT_HEADERS });
      await probe.entered(`preflight:${id}`);
      // The preflight's handler still runs: a GET neither waits for it nor is refused.
      const get = await http.get(path);
      probe.open(`preflight:${id}`);
      const answered = await preflight;
      const again = await http.get(path);
      assert.equal(get.status, 200);
      assertNotReplayed(get);
      assert.deepEqual(get.body, { id, method: 'GET', execution: 2 });
      assert.equal(answered.status, 200);
      assertNotReplayed(answered);
      assert.deepEqual(answered.body, { id, method: 'OPTIONS', execution: 1 });
      assertReplayOf(again, get);
      assert.equal(probe.executions(`preflight:${id}`), 2);
      if (app.records) assert.equal(await app.records(), 1);
    },
  },
];
