import { PayloadTooLargeError, UnsupportedResponseError } from '@oncely/core';
import { ResponseCapture, type HttpResponse } from '@oncely/core/adapter';
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

/** One real `node:http` server per test; `handle` plays the app (and the adapter). */
let server: Server | undefined;
let responseErrors: Error[] = [];

/** An app's own response prototype, as Express swaps every `res` to its `app.response`. */
const appResponse = Object.create(ServerResponse.prototype) as ServerResponse;
/** Whether the server swaps each response's prototype to `appResponse`, as Express does. */
let swapsPrototype = false;

async function serve(handle: (res: ServerResponse, req: IncomingMessage) => void): Promise<string> {
  server = createServer((req, res) => {
    if (swapsPrototype) Object.setPrototypeOf(res, appResponse);
    res.on('error', (error) => responseErrors.push(error));
    handle(res, req);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

function capture(res: ServerResponse, maxBytes = 1024): ResponseCapture {
  return new ResponseCapture(res, { route: 'POST /orders', maxBytes });
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const problem: HttpResponse = {
  status: 409,
  headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
  body: { kind: 'json', value: { title: 'In progress' } },
};

beforeEach(() => {
  responseErrors = [];
});

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
  // Errors emitted on a response (ERR_STREAM_WRITE_AFTER_END, …) would crash a plain process.
  expect(responseErrors).toEqual([]);
});

describe.each([
  ['a plain Node response', false],
  ['a response whose prototype the app swapped (Express)', true],
])('ResponseCapture on %s', (_, swapped) => {
  beforeAll(() => {
    swapsPrototype = swapped;
  });

  afterAll(() => {
    swapsPrototype = false;
  });

  it('keeps write, write, end whole and sends it once, as held', async () => {
    const kept = deferred<HttpResponse>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then((response) => {
        kept.resolve(response);
        c.commit();
      });
      res.setHeader('content-type', 'application/json');
      res.write('{"a"');
      res.write(':1');
      res.end('}');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(200);
    expect(await reply.text()).toBe('{"a":1}');
    expect(reply.headers.get('content-length')).toBe('7');
    expect(await kept.promise).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { kind: 'json', value: { a: 1 } },
    });
  });

  it("holdingFor holds what the app writes for its handler's value, and refuses a stream before anything is written", async () => {
    const kept = deferred<HttpResponse>();
    const refused = deferred<{ error: unknown; headersSent: boolean }>();
    const url = await serve((res, req) => {
      if (req.url === '/stream') {
        try {
          ResponseCapture.holdingFor(Readable.from(['x']), res, {
            route: 'POST /orders',
            maxBytes: 64,
          });
        } catch (error) {
          refused.resolve({ error, headersSent: res.headersSent });
          res.statusCode = 500;
          res.end();
        }
        return;
      }
      const c = ResponseCapture.holdingFor({ a: 1 }, res, { route: 'POST /orders', maxBytes: 64 });
      void c.held!.then((response) => {
        kept.resolve(response);
        c.commit();
      });
      res.setHeader('content-type', 'application/json');
      res.end('{"a":1}');
    });

    const reply = await fetch(url);
    expect(await reply.text()).toBe('{"a":1}');
    expect(await kept.promise).toMatchObject({
      status: 200,
      body: { kind: 'json', value: { a: 1 } },
    });
    await fetch(`${url}stream`);
    const { error, headersSent } = await refused.promise;
    expect(error).toBeInstanceOf(UnsupportedResponseError);
    expect(headersSent).toBe(false);
  });

  it('keeps writeHead with an object of headers', async () => {
    const kept = deferred<HttpResponse>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then((response) => {
        kept.resolve(response);
        c.commit();
      });
      res.setHeader('x-before', 'kept');
      res.writeHead(202, { 'x-one': '1', 'content-type': 'text/plain' });
      res.end('ok');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(202);
    expect(reply.headers.get('x-one')).toBe('1');
    expect(reply.headers.get('x-before')).toBe('kept');
    expect(await reply.text()).toBe('ok');
    const response = await kept.promise;
    expect(response.status).toBe(202);
    expect(response.headers).toEqual({
      'x-before': 'kept',
      'x-one': '1',
      'content-type': 'text/plain',
    });
    expect(response.body).toEqual({ kind: 'bytes', value: Buffer.from('ok') });
  });

  it('keeps writeHead with a reason and raw header pairs, repeated names included', async () => {
    const kept = deferred<HttpResponse>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then((response) => {
        kept.resolve(response);
        c.commit();
      });
      res.setHeader('x-two', 'old');
      res.writeHead(203, 'Custom Reason', [
        'x-two',
        'new',
        'set-cookie',
        'a=1',
        'set-cookie',
        'b=2',
      ]);
      res.end();
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(203);
    expect(reply.statusText).toBe('Custom Reason');
    expect(reply.headers.get('x-two')).toBe('new');
    expect(reply.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    const response = await kept.promise;
    expect(response.headers).toEqual({ 'x-two': 'new', 'set-cookie': 'a=1, b=2' });
    expect(response.body).toEqual({ kind: 'empty' });
  });

  it('keeps the status and headers set before a Buffer end', async () => {
    const kept = deferred<HttpResponse>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then((response) => {
        kept.resolve(response);
        c.commit();
      });
      res.statusCode = 201;
      res.setHeader('x-id', '7');
      res.end(Buffer.from([1, 2, 3]));
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(201);
    expect(reply.headers.get('x-id')).toBe('7');
    expect(Buffer.from(await reply.arrayBuffer())).toEqual(Buffer.from([1, 2, 3]));
    expect(await kept.promise).toEqual({
      status: 201,
      headers: { 'x-id': '7' },
      body: { kind: 'bytes', value: Buffer.from([1, 2, 3]) },
    });
  });

  it('keeps a piped stream whole', async () => {
    const kept = deferred<HttpResponse>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then((response) => {
        kept.resolve(response);
        c.commit();
      });
      Readable.from(['x', 'y', 'z']).pipe(res);
    });
    const reply = await fetch(url);
    expect(await reply.text()).toBe('xyz');
    expect((await kept.promise).body).toEqual({ kind: 'bytes', value: Buffer.from('xyz') });
  });

  it('swallows a second end, before and after commit, and sends the first', async () => {
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then(() => {
        c.commit();
        res.end('third');
      });
      res.end('first');
      res.statusCode = 500;
      res.end('second');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(200);
    expect(await reply.text()).toBe('first');
  });

  it('swallows setHeader, writeHead and writes after commit without throwing', async () => {
    const thrown = deferred<unknown>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then(() => {
        c.commit();
        try {
          res.setHeader('x-late', '1');
          res.appendHeader('x-late', '2');
          res.removeHeader('content-type');
          res.writeHead(500, { 'x-late': '3' });
          res.flushHeaders();
          res.write('late');
          res.end('late');
          thrown.resolve(undefined);
        } catch (error) {
          thrown.resolve(error);
        }
      });
      res.setHeader('content-type', 'text/plain');
      res.end('sent');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-late')).toBeNull();
    expect(await reply.text()).toBe('sent');
    expect(await thrown.promise).toBeUndefined();
  });

  it('sends the headers held at the end, even when some were changed behind the patch since', async () => {
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then(() => {
        ServerResponse.prototype.setHeader.call(res, 'x-late', '1');
        ServerResponse.prototype.removeHeader.call(res, 'x-kept');
        c.commit();
      });
      res.setHeader('content-type', 'text/plain');
      res.setHeader('x-kept', ['a', 'b']);
      res.end('sent');
    });
    const reply = await fetch(url);
    expect(reply.headers.get('x-late')).toBeNull();
    expect(reply.headers.get('x-kept')).toBe('a, b');
    expect(reply.headers.get('content-type')).toBe('text/plain');
    expect(await reply.text()).toBe('sent');
  });

  it('replaces a response the app already ended, dropping its headers', async () => {
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then(() => {
        c.replaceWith(problem);
        res.end('after');
      });
      res.setHeader('x-app', 'yes');
      res.end('mine');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(409);
    expect(reply.headers.get('x-app')).toBeNull();
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(await reply.json()).toEqual({ title: 'In progress' });
  });

  it("replaces the app's held response keeping the headers its layers set before hold(), and those handed over with writeHead", async () => {
    const url = await serve((res) => {
      res.setHeader('access-control-allow-origin', 'https://shop.example');
      res.setHeader('vary', 'Origin');
      const c = capture(res);
      void c
        .hold()
        .then(() => c.replaceWith({ ...problem, headers: { ...problem.headers, vary: 'Accept' } }));
      res.setHeader('x-app', 'yes');
      res.setHeader('content-type', 'text/plain');
      res.writeHead(201, { 'x-hook': 'from-writeHead', etag: '"app"' });
      res.end('mine');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(409);
    expect(reply.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(reply.headers.get('x-hook')).toBe('from-writeHead');
    expect(reply.headers.get('x-app')).toBeNull();
    expect(reply.headers.get('etag')).toBeNull();
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(reply.headers.get('vary')).toBe('Accept, Origin');
    expect(await reply.json()).toEqual({ title: 'In progress' });
  });

  it('writes a replay over the body the platform was handed, keeping every header but those of that body', async () => {
    const replay: HttpResponse = {
      status: 201,
      headers: {
        'content-type': 'application/json',
        vary: 'origin, Accept',
        'idempotent-replayed': 'true',
      },
      body: { kind: 'json', value: { id: 1 } },
    };
    const url = await serve((res) => {
      const c = capture(res);
      c.replaceWith(replay);
      res.setHeader('x-request-id', 'r-2');
      res.setHeader('vary', 'Origin');
      res.writeHead(200, {
        'content-type': 'text/html',
        'content-length': '3',
        'content-encoding': 'gzip',
        etag: '"emitted"',
        'set-cookie': 'sid=fresh',
      });
      res.end('abc');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(201);
    expect(reply.headers.get('x-request-id')).toBe('r-2');
    expect(reply.headers.getSetCookie()).toEqual(['sid=fresh']);
    expect(reply.headers.get('etag')).toBeNull();
    expect(reply.headers.get('content-encoding')).toBeNull();
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.headers.get('content-length')).toBe('8');
    expect(reply.headers.get('vary')).toBe('origin, Accept');
    expect(await reply.text()).toBe('{"id":1}');
  });

  it('answers 304 without a body where the platform says the request is fresh', async () => {
    const url = await serve((res) => {
      const c = new ResponseCapture(res, {
        route: 'GET /users/:id',
        maxBytes: 1024,
        fresh: (response) => response.getHeader('etag') === '"v1"',
      });
      c.replaceWith({
        status: 200,
        headers: { 'content-type': 'application/json', etag: '"v1"' },
        body: { kind: 'json', value: { id: 1 } },
      });
      res.end('{}');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(304);
    expect(reply.headers.get('etag')).toBe('"v1"');
    expect(reply.headers.get('content-type')).toBeNull();
    expect(await reply.text()).toBe('');
  });

  it('replaces a response the app has not ended yet at the moment it ends', async () => {
    const beforeEnd = deferred<boolean>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold();
      c.replaceWith(problem);
      beforeEnd.resolve(res.headersSent);
      res.setHeader('x-app', 'yes');
      res.writeHead(200);
      res.end('mine');
      res.end('again');
    });
    const reply = await fetch(url);
    expect(await beforeEnd.promise).toBe(false);
    expect(reply.status).toBe(409);
    expect(reply.headers.get('x-app')).toBeNull();
    expect(await reply.json()).toEqual({ title: 'In progress' });
  });

  it('replaces without hold(): the app writes past maxBytes, commits nothing, and only the replacement goes out', async () => {
    const url = await serve((res) => {
      const c = capture(res, 16);
      c.replaceWith(problem);
      c.commit();
      res.setHeader('content-type', 'text/plain');
      res.write('a body far longer than sixteen bytes, ');
      res.end('which nobody asked to keep');
      c.commit();
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(409);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(await reply.json()).toEqual({ title: 'In progress' });
  });

  it('interrupt sends at once while the app still runs, and swallows what it writes later', async () => {
    const later = deferred<unknown>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold();
      res.setHeader('x-app', 'yes');
      res.write('partial');
      c.interrupt(problem);
      setImmediate(() => {
        try {
          res.setHeader('x-late', '1');
          res.end('late');
          later.resolve(undefined);
        } catch (error) {
          later.resolve(error);
        }
      });
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(409);
    expect(reply.headers.get('x-app')).toBeNull();
    expect(await reply.json()).toEqual({ title: 'In progress' });
    expect(await later.promise).toBeUndefined();
  });

  it('refuses a response over maxBytes whole: nothing sent, the rest swallowed', async () => {
    const refusal = deferred<{ error: unknown; headersSent: boolean }>();
    const url = await serve((res) => {
      const c = capture(res, 4);
      c.hold().then(undefined, (error: unknown) => {
        refusal.resolve({ error, headersSent: res.headersSent });
        res.end('f');
        c.replaceWith({ status: 413, headers: {}, body: { kind: 'empty' } });
      });
      res.write('abc');
      res.write('de');
    });
    const reply = await fetch(url);
    const { error, headersSent } = await refusal.promise;
    expect(headersSent).toBe(false);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({ subject: 'response', limitBytes: 4, actualBytes: 5 });
    expect(reply.status).toBe(413);
    expect(await reply.text()).toBe('');
  });

  it('refuses a body chunk that is neither text nor bytes', async () => {
    const refusal = deferred<unknown>();
    const url = await serve((res) => {
      const c = capture(res);
      c.hold().then(undefined, (error: unknown) => {
        refusal.resolve(error);
        c.replaceWith(problem);
      });
      res.write(42);
    });
    const reply = await fetch(url);
    expect(await refusal.promise).toBeInstanceOf(UnsupportedResponseError);
    expect(reply.status).toBe(409);
  });

  it('keeps no body on a 204, as Node sends none', async () => {
    const kept = deferred<HttpResponse>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then((response) => {
        kept.resolve(response);
        c.commit();
      });
      res.statusCode = 204;
      res.end('ignored');
    });
    const reply = await fetch(url, { method: 'POST' });
    expect(reply.status).toBe(204);
    expect(await reply.text()).toBe('');
    expect((await kept.promise).body).toEqual({ kind: 'empty' });
  });

  it('after release, passes the app writes straight through from the initial status and headers', async () => {
    const url = await serve((res) => {
      const c = capture(res);
      res.setHeader('x-initial', '1');
      void c.hold();
      res.setHeader('x-handler', '1');
      res.statusCode = 201;
      res.write('dropped');
      c.release();
      res.statusCode = 500;
      res.write('through ');
      res.end('whole');
    });
    const reply = await fetch(url);
    expect(reply.status).toBe(500);
    expect(reply.headers.get('x-initial')).toBe('1');
    expect(reply.headers.get('x-handler')).toBeNull();
    expect(await reply.text()).toBe('through whole');
  });

  it('restores the instance methods, own properties included, and sends through them', async () => {
    const checks = deferred<Record<string, boolean>>();
    const url = await serve((res) => {
      const protoEnd = ServerResponse.prototype.end;
      let ownEndCalls = 0;
      // An own method set before oncely, as compression middleware does.
      const ownEnd = function (this: ServerResponse, ...args: unknown[]) {
        ownEndCalls += 1;
        return (protoEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
      };
      res.end = ownEnd as ServerResponse['end'];
      const c = capture(res);
      void c.hold();
      const patched = res.end !== ownEnd && Object.hasOwn(res, 'write');
      c.release();
      checks.resolve({
        patched,
        ownEndRestored: res.end === ownEnd,
        writeBackOnPrototype: !Object.hasOwn(res, 'write') && !Object.hasOwn(res, 'setHeader'),
        sentThroughOwnEnd: (res.end('ok'), ownEndCalls === 1),
      });
    });
    const reply = await fetch(url);
    expect(await reply.text()).toBe('ok');
    expect(await checks.promise).toEqual({
      patched: true,
      ownEndRestored: true,
      writeBackOnPrototype: true,
      sentThroughOwnEnd: true,
    });
  });

  it('commit sends through the methods the app had before the capture', async () => {
    const calls = deferred<number>();
    const url = await serve((res) => {
      const protoEnd = ServerResponse.prototype.end;
      let ownEndCalls = 0;
      res.end = function (this: ServerResponse, ...args: unknown[]) {
        ownEndCalls += 1;
        return (protoEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
      } as ServerResponse['end'];
      const c = capture(res);
      void c.hold().then(() => {
        c.commit();
        calls.resolve(ownEndCalls);
      });
      res.end('ok');
    });
    expect(await (await fetch(url)).text()).toBe('ok');
    expect(await calls.promise).toBe(1);
  });

  it('commit after the client left neither throws nor emits an error', async () => {
    const ended = deferred<ResponseCapture>();
    const committed = deferred<unknown>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold().then(() => ended.resolve(c));
      res.once('close', () => {
        try {
          c.commit();
          committed.resolve(undefined);
        } catch (error) {
          committed.resolve(error);
        }
      });
      res.end('late');
    });
    const abort = new AbortController();
    const request = fetch(url, { signal: abort.signal }).catch(() => undefined);
    await ended.promise;
    abort.abort();
    await request;
    expect(await committed.promise).toBeUndefined();
  });
});

describe('ResponseCapture on a response whose prototype the app swapped (Express)', () => {
  beforeAll(() => {
    swapsPrototype = true;
  });

  afterAll(() => {
    swapsPrototype = false;
  });

  it("patches one prototype of its own in front of the app's, and puts the app's back on release", async () => {
    const checks = deferred<Record<string, boolean>>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold();
      const during = Object.getPrototypeOf(res) as object;
      const ownMethods = Object.keys(res).some((name) => ['write', 'end'].includes(name));
      c.release();
      checks.resolve({
        inFront: during !== appResponse && Object.getPrototypeOf(during) === appResponse,
        ownMethods,
        appPrototypeBack: Object.getPrototypeOf(res) === appResponse,
      });
      res.end('through');
    });
    expect(await (await fetch(url)).text()).toBe('through');
    expect(await checks.promise).toEqual({
      inFront: true,
      ownMethods: false,
      appPrototypeBack: true,
    });
  });

  it('leaves a prototype the app swapped again alone on release (a request leaving a mounted sub-app)', async () => {
    const parentResponse = Object.create(ServerResponse.prototype) as ServerResponse;
    const after = deferred<boolean>();
    const url = await serve((res) => {
      const c = capture(res);
      void c.hold();
      Object.setPrototypeOf(res, parentResponse);
      c.release();
      after.resolve(Object.getPrototypeOf(res) === parentResponse);
      res.end('parent');
    });
    expect(await (await fetch(url)).text()).toBe('parent');
    expect(await after.promise).toBe(true);
  });

  it('a second capture on the same response patches its own methods, and both keep one response', async () => {
    const kept = deferred<[HttpResponse, HttpResponse]>();
    const url = await serve((res) => {
      const outer = capture(res);
      const inner = capture(res);
      const outerKept = outer.hold();
      void inner.hold().then((response) => {
        inner.commit();
        void outerKept.then((outerResponse) => {
          kept.resolve([response, outerResponse]);
          outer.commit();
        });
      });
      res.setHeader('content-type', 'text/plain');
      res.end('nested');
    });
    const reply = await fetch(url);
    expect(await reply.text()).toBe('nested');
    const [inner, outer] = await kept.promise;
    expect(inner.body).toEqual(outer.body);
    expect(inner.status).toBe(200);
  });

  it('sends with the methods from before the capture, past an own method patched over them since', async () => {
    const calls = deferred<number>();
    const url = await serve((res) => {
      const c = capture(res);
      const kept = c.hold();
      let lateEndCalls = 0;
      const routed = res.end;
      res.end = function (this: ServerResponse, ...args: unknown[]) {
        lateEndCalls += 1;
        return (routed as (...a: unknown[]) => ServerResponse).apply(this, args);
      } as ServerResponse['end'];
      void kept.then(() => {
        c.commit();
        calls.resolve(lateEndCalls);
      });
      res.end('once');
    });
    expect(await (await fetch(url)).text()).toBe('once');
    expect(await calls.promise).toBe(1);
  });
});
