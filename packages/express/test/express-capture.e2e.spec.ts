import { ProblemType } from '@oncely/core';
import { spawnWorker } from '@oncely/testing-kit';
import express from 'express';
// Express 4 under the `express4` alias (root devDependency); see conformance/express4.d.ts.
import express4 from 'express4';
import { randomUUID } from 'node:crypto';
import {
  FILE_TEXT,
  startCaptureApp,
  type CaptureApp,
  type ExpressMajor,
} from './fixtures/capture.app.js';

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

async function post(baseUrl: string, path: string, key: string): Promise<Reply> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'x-tenant': 't-1', 'content-type': 'application/json' },
    body: '{}',
  });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.text(),
  };
}

/** The first answer and its retry with the same key. */
async function answerAndRetry(baseUrl: string, path: string): Promise<[Reply, Reply]> {
  const key = randomUUID();
  const first = await post(baseUrl, path, key);
  const retry = await post(baseUrl, path, key);
  return [first, retry];
}

/** A replay is the first answer byte for byte, marked as replayed. */
function expectReplayOf(retry: Reply, first: Reply): void {
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect({ status: retry.status, text: retry.text }).toEqual({
    status: first.status,
    text: first.text,
  });
  expect(retry.headers['content-type']).toBe(first.headers['content-type']);
}

describe.each([
  ['Express 5', express as ExpressMajor, 'express'],
  ['Express 4', express4 as ExpressMajor, 'express4'],
])('Express capture on %s', (_name, major, moduleName) => {
  let app: CaptureApp;

  beforeAll(async () => {
    app = await startCaptureApp(major);
  });

  afterAll(async () => {
    await app.close();
  });

  it('res.write("a"), res.write("b"), res.end("c") is sent and replayed whole as "abc"', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/abc');
    expect(first.status).toBe(200);
    expect(first.text).toBe('abc');
    expectReplayOf(retry, first);
    expect(app.executions('abc')).toBe(1);
  });

  it('JSON written in chunks arrives whole, and the replay is the same JSON', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/chunks');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(first.text)).toEqual({ a: 1 });
    expectReplayOf(retry, first);
    expect(app.executions('chunks')).toBe(1);
  });

  it('res.json twice: the client and the replay both get the first answer', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/double-json');
    expect(first.status).toBe(201);
    expect(JSON.parse(first.text)).toEqual({ n: 1, execution: 1 });
    expectReplayOf(retry, first);
    expect(app.executions('double-json')).toBe(1);
  });

  it('next(err) after res.json: the client and the replay both get the answer', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/json-then-error');
    expect(first.status).toBe(201);
    expect(JSON.parse(first.text)).toEqual({ ok: true, execution: 1 });
    expectReplayOf(retry, first);
    expect(app.executions('json-then-error')).toBe(1);
  });

  it('a piped stream within maxResponseBytes is captured whole and replayed', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/stream');
    expect(first.status).toBe(200);
    expect(first.text).toBe('part 1part 2');
    expect(first.headers['content-length']).toBe('12');
    expectReplayOf(retry, first);
    expect(app.executions('stream')).toBe(1);
  });

  it('res.sendFile within maxResponseBytes is captured whole and replayed', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/file');
    expect(first.status).toBe(200);
    expect(first.text).toBe(FILE_TEXT);
    expect(first.headers['content-type']).toMatch(/^text\/plain/);
    expectReplayOf(retry, first);
    expect(app.executions('file')).toBe(1);
  });

  it('a stream over maxResponseBytes is refused whole: one problem response, kept, so its retry replays it', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/big-stream');
    expect(first.status).toBe(413);
    expect(first.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(first.text)).toEqual({
      type: ProblemType.payloadTooLarge,
      title: 'Response too large to keep',
      status: 413,
      detail:
        'The request ran once but its response could not be kept; retries of this key get this error.',
      limitBytes: 64,
    });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expectReplayOf(retry, first);
    expect(app.executions('big-stream')).toBe(1);
  });

  it('SingleFlight inside an idempotent route: the inner response is kept whole by both', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/nested');
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text)).toEqual({ execution: 1, signal: true });
    expectReplayOf(retry, first);
    expect(app.executions('nested')).toBe(1);
  });

  it('a route of a mounted app is kept and replayed, once', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/mounted/order');
    expect(first.status).toBe(201);
    expect(JSON.parse(first.text)).toEqual({ execution: 1 });
    expectReplayOf(retry, first);
    expect(app.executions('mounted-order')).toBe(1);
  });

  it("a route of a mounted app passing on to the parent app: the parent's answer is kept and replayed", async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/mounted/pass-on');
    expect(first.status).toBe(202);
    expect(JSON.parse(first.text)).toEqual({ answeredBy: 'parent', execution: 1 });
    expectReplayOf(retry, first);
    expect(app.executions('mounted-pass-on')).toBe(1);
  });

  it('next(err) before answering reaches the app error handler and is not kept', async () => {
    const [first, retry] = await answerAndRetry(app.baseUrl, '/error-first');
    expect(first.status).toBe(500);
    expect(JSON.parse(first.text)).toEqual({ error: 'refused by execution 1' });
    expect(retry.status).toBe(500);
    expect(JSON.parse(retry.text)).toEqual({ error: 'refused by execution 2' });
    expect(app.executions('error-first')).toBe(2);
  });

  it('misbehaving handlers do not crash a plain Node process', async () => {
    const worker = spawnWorker('packages/express/test/fixtures/capture.worker.ts', {
      args: [moduleName],
    });
    const { baseUrl } = await worker.message<{ type: string; baseUrl: string }>(
      (m) => m.type === 'ready',
    );
    const exercise = async () => {
      for (const path of ['/abc', '/double-json', '/json-then-error', '/stream', '/big-stream']) {
        await answerAndRetry(baseUrl, path);
      }
      const health = await fetch(`${baseUrl}/health`);
      return health.json();
    };
    const alive = await exercise().catch((error: unknown) => {
      throw new Error(`The app process stopped answering (${String(error)}):\n${worker.output()}`);
    });
    expect(alive).toEqual({ alive: true });
    worker.send({ type: 'stop' });
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).not.toMatch(/ERR_STREAM_WRITE_AFTER_END|ERR_HTTP_HEADERS_SENT/);
  }, 60_000);
});
