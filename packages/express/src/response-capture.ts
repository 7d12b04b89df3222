import {
  UnsupportedResponseError,
  handlerContext,
  headerFields,
  type HandlerContext,
  type HttpResponse,
  type StoredBody,
} from '@oncely/core';
import type { NextFunction, Request, Response } from 'express';
import type { OutgoingHttpHeaders } from 'node:http';

const CAPTURES = Symbol('oncely:captures');

type CapturingRequest = Request & { [CAPTURES]?: ResponseCapture[] };

const PATCHED = ['end', 'write', 'writeHead', 'flushHeaders'] as const;
type Patched = (typeof PATCHED)[number];

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Holds back what a protected handler sends (`res.json`, `res.send`, `res.end`, … all end in
 * `res.end`) so the executor can keep it, share it or replace it by a replay. The response is
 * sent only by `commit()`. Streaming (`res.write`, a piped stream, `res.sendFile`) cannot be
 * kept whole, so it fails the call with `UnsupportedResponseError` instead of half-sending.
 */
export class ResponseCapture {
  readonly #req: CapturingRequest;
  readonly #res: Response;
  readonly #route: string;
  readonly #status: number;
  readonly #headers: OutgoingHttpHeaders;
  readonly #saved = new Map<Patched, { own: boolean; value: unknown }>();
  #endArgs: unknown[] | undefined;
  #settled = false;
  #resolve!: (response: HttpResponse) => void;
  #reject!: (error: unknown) => void;

  /** The handler's context, the transaction of an enclosing capture included. */
  readonly context: HandlerContext;

  constructor(req: Request, res: Response, route: string, context: HandlerContext) {
    this.#req = req;
    this.#res = res;
    this.#route = route;
    this.#status = res.statusCode;
    this.#headers = res.getHeaders();
    this.context = withEnclosing(ResponseCapture.active(req)?.context, context);
  }

  /** The innermost capture holding the request's response back, if any. */
  static active(req: Request): ResponseCapture | undefined {
    return (req as CapturingRequest)[CAPTURES]?.at(-1);
  }

  /** Whether the handler ended its response (and it is held, waiting for `commit`). */
  get captured(): boolean {
    return this.#endArgs !== undefined;
  }

  /** Runs the rest of the route (`next()`) and resolves with the response it ends with. */
  run(next: NextFunction): Promise<HttpResponse> {
    const promise = new Promise<HttpResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    (this.#req[CAPTURES] ??= []).push(this);
    this.#patch();
    try {
      next();
    } catch (error) {
      this.fail(error);
    }
    return promise;
  }

  /**
   * Ends the call with an error the route passed on (`next(error)`, a throw, a refused stream).
   * Returns `false` when the response was already ended, and the error is not this capture's.
   */
  fail(error: unknown): boolean {
    if (this.#settled) return false;
    this.#settle();
    this.#reject(error);
    return true;
  }

  /** Sends the held response exactly as the handler ended it. */
  commit(): void {
    const args = this.#endArgs ?? [];
    (this.#res.end as (...args: unknown[]) => unknown).apply(this.#res, args);
  }

  /** Forgets what the handler set (status, headers) before another response is written. */
  discard(): void {
    if (!this.#settled) this.#settle();
    if (this.#res.headersSent) return;
    for (const name of this.#res.getHeaderNames()) this.#res.removeHeader(name);
    for (const [name, value] of Object.entries(this.#headers)) {
      if (value !== undefined) this.#res.setHeader(name, value);
    }
    this.#res.statusCode = this.#status;
  }

  #patch(): void {
    const res = this.#res as unknown as Record<Patched, unknown>;
    for (const name of PATCHED) {
      this.#saved.set(name, { own: Object.hasOwn(res, name), value: res[name] });
    }
    res.end = (...args: unknown[]) => {
      if (!this.#settled) this.#end(args);
      return this.#res;
    };
    res.writeHead = (status: number, ...rest: unknown[]) => {
      if (!this.#settled) this.#writeHead(status, rest);
      return this.#res;
    };
    // `false` tells a piping source to pause, so nothing more is pushed after the refusal.
    res.write = () => {
      this.fail(new UnsupportedResponseError(this.#route, STREAMED));
      return false;
    };
    res.flushHeaders = () => {
      this.fail(new UnsupportedResponseError(this.#route, STREAMED));
    };
  }

  #restore(): void {
    const res = this.#res as unknown as Record<Patched, unknown>;
    for (const [name, saved] of this.#saved) {
      if (saved.own) res[name] = saved.value;
      else delete res[name];
    }
  }

  #settle(): void {
    this.#settled = true;
    this.#restore();
    const stack = this.#req[CAPTURES];
    const index = stack?.lastIndexOf(this) ?? -1;
    if (stack && index >= 0) stack.splice(index, 1);
  }

  #end(args: unknown[]): void {
    const [chunk, encoding] = args;
    let bytes: Buffer;
    try {
      bytes = bytesOf(chunk, typeof encoding === 'string' ? encoding : undefined);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.#endArgs = args;
    this.#settle();
    this.#resolve({
      status: this.#res.statusCode,
      headers: headerFields(this.#res.getHeaders()),
      body: storedBodyOf(bytes, this.#res.getHeader('content-type')),
    });
  }

  #writeHead(status: number, rest: unknown[]): void {
    this.#res.statusCode = status;
    const [first, second] = rest;
    if (typeof first === 'string') this.#res.statusMessage = first;
    const headers = typeof first === 'string' ? second : first;
    if (Array.isArray(headers)) {
      // Raw form: [name, value, name, value, …] or [[name, value], …].
      const pairs = Array.isArray(headers[0])
        ? (headers as unknown[][])
        : headers.flatMap((_, i) => (i % 2 === 0 ? [headers.slice(i, i + 2)] : []));
      for (const [name, value] of pairs) this.#res.setHeader(String(name), value as string);
    } else if (typeof headers === 'object' && headers !== null) {
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined) this.#res.setHeader(name, value as string);
      }
    }
  }
}

const STREAMED = 'a streamed response (res.write, a piped stream or a file)';

/** An inner capture (SingleFlight inside an idempotent route) keeps the outer's transaction. */
function withEnclosing(outer: HandlerContext | undefined, own: HandlerContext): HandlerContext {
  if (!outer) return own;
  return handlerContext(
    () => AbortSignal.any([outer.signal, own.signal]),
    own.transaction ?? outer.transaction,
  );
}

function bytesOf(chunk: unknown, encoding: string | undefined): Buffer {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return Buffer.alloc(0);
  if (typeof chunk === 'string') return Buffer.from(chunk, (encoding ?? 'utf8') as BufferEncoding);
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  throw new TypeError(
    `res.end() was given ${typeof chunk}; send a string, a Buffer or a Uint8Array.`,
  );
}

/**
 * JSON is kept as a value (readable in the record) only when re-serialising it gives back the
 * exact bytes sent; anything else is kept as bytes, so every replay is byte for byte the same.
 */
function storedBodyOf(bytes: Buffer, contentType: unknown): StoredBody {
  if (bytes.length === 0) return { kind: 'empty' };
  if (typeof contentType === 'string' && JSON_TYPE.test(contentType)) {
    const text = bytes.toString('utf8');
    try {
      const value: unknown = JSON.parse(text);
      if (JSON.stringify(value) === text) return { kind: 'json', value };
    } catch {
      // Not JSON after all: kept as bytes below.
    }
  }
  return { kind: 'bytes', value: bytes };
}
