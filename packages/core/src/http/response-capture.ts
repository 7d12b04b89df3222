import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { HttpResponse } from './http-response.js';
import { carriesBody, sentBodyOf } from './sent-body.js';
import { headerFields } from './replay-header-policy.js';
import { applyWriteHead } from './apply-write-head.js';
import { HeldBody } from './held-body.js';
import { hasHeaders, type HeldResponse } from './held-response.js';
import {
  patchResponseMethods,
  sealedResponseMethods,
  type MethodRoute,
  type PatchedResponseMethods,
  type ResponseMethod,
  type ResponseMethodName,
} from './response-methods.js';
import { writeHttpResponse, type FreshnessCheck } from './response-writer.js';
import { UnsupportedResponseError } from './unsupported-response.error.js';
import { storedBodyOf } from './stored-body.js';

export interface ResponseCaptureOptions {
  /** Route name, for error messages. */
  readonly route: string;
  /** Largest body kept; a larger response is refused whole (`PayloadTooLargeError`). */
  readonly maxBytes: number;
  /** How the platform answers a conditional `GET` itself, if it does (see `writeHttpResponse`). */
  readonly fresh?: FreshnessCheck;
}

/**
 * - `idle`: not holding; the app writes straight to the socket.
 * - `holding`: the app's writes are held back, it has not ended yet.
 * - `ended`: the app ended; its whole response is held, waiting for `commit` or `replaceWith`.
 * - `refused`: the response cannot be kept whole; nothing was sent, waiting for `replaceWith`.
 * - `released`: the app's writes go straight through again.
 * - `sent`: oncely sent a response; the app's writes are swallowed.
 */
type State = 'idle' | 'holding' | 'ended' | 'refused' | 'released' | 'sent';

/**
 * Holds back what an app writes on a raw `node:http` response (Express's `res`, Fastify's
 * `reply.raw`) so oncely can keep it, share it or replace it, and then sends it whole or not at
 * all: the client and the kept record always agree. It patches the response's methods
 * (`response-methods.ts`) and sends with the ones from before the patch. Whatever the app does
 * (double end, write after end, setHeader after end, an error handler writing after a response)
 * never throws and never reaches the socket twice.
 */
export class ResponseCapture {
  readonly #res: ServerResponse;
  readonly #route: string;
  readonly #body: HeldBody;
  readonly #fresh: FreshnessCheck | undefined;
  /**
   * What the patched methods do: `pass` calls the app's own, `hold` holds back, `seal` swallows.
   * `res` is patched once, then only switches modes: deleting methods at every step would make
   * V8 turn each response into a slow dictionary-mode object.
   */
  #mode: 'pass' | 'hold' | 'seal' = 'pass';
  #patched: PatchedResponseMethods | undefined;
  readonly #methodFor: MethodRoute = (name) => {
    if (this.#mode === 'pass') return undefined;
    return (this.#mode === 'hold' ? this.#holding : this.#sealed)?.[name];
  };
  #holding: Partial<Record<ResponseMethodName, ResponseMethod>> | undefined;
  #sealed: Record<ResponseMethodName, ResponseMethod> | undefined;
  #state: State = 'idle';
  #appEnded = false;
  #initial: { readonly status: number; readonly headers: OutgoingHttpHeaders } | undefined;
  /** What the app last passed to `writeHead` while held: reason and headers, as Node takes them. */
  #headReason: unknown;
  #headFields: unknown;
  #held: HeldResponse | undefined;
  /** What to send once the app ends, asked for before it did. */
  #pending:
    | { readonly kind: 'commit' }
    | { readonly kind: 'replace'; readonly response: HttpResponse }
    | undefined;
  #promise: Promise<HttpResponse> | undefined;
  #resolve: (response: HttpResponse) => void = () => undefined;
  #reject: (error: unknown) => void = () => undefined;

  /**
   * A capture already holding (`hold()`, its promise as `held`) what the app writes for the value
   * its handler returned, for a framework that sends that value itself (Nest): a value that
   * cannot be kept whole (a stream, a web `Response`, a function) is refused at once with
   * `UnsupportedResponseError`, before anything of it is written.
   */
  static holdingFor(
    value: unknown,
    res: ServerResponse,
    options: ResponseCaptureOptions,
  ): ResponseCapture {
    storedBodyOf(value, options.route);
    const capture = new ResponseCapture(res, options);
    void capture.hold();
    return capture;
  }

  constructor(res: ServerResponse, options: ResponseCaptureOptions) {
    this.#res = res;
    this.#route = options.route;
    this.#body = new HeldBody(options.route, options.maxBytes);
    this.#fresh = options.fresh;
  }

  /**
   * Starts holding back everything the app writes (`writeHead`, `setHeader` then `write`,
   * `write`, `end`, `flushHeaders`, piped streams, `res.sendFile`): nothing reaches the socket.
   * Resolves when the app ends the response, with what it ended with: the real status, its
   * headers (`writeHead`'s merged in) and the whole body (JSON kept as a value only when
   * re-serialising gives the same bytes, else bytes). Rejects when the response cannot be kept
   * whole (over `maxBytes`: `PayloadTooLargeError`; anything unusable:
   * `UnsupportedResponseError`); then nothing was sent and the app's later writes are swallowed
   * until `replaceWith`. Calling it again returns the same promise.
   */
  hold(): Promise<HttpResponse> {
    if (this.#promise) return this.#promise;
    this.#promise = new Promise<HttpResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A rejection nobody waits for any more (the call was answered) must not crash the process.
    this.#promise.catch(() => undefined);
    if (this.#state === 'idle') {
      this.#initial = { status: this.#res.statusCode, headers: this.#res.getHeaders() };
      this.#startHolding();
    }
    return this.#promise;
  }

  /** What `hold()` resolves with; `undefined` before it is called. */
  get held(): Promise<HttpResponse> | undefined {
    return this.#promise;
  }

  #startHolding(): void {
    this.#state = 'holding';
    this.#holding ??= this.#holdingMethods();
    this.#enter('hold');
  }

  /**
   * Whether the body the app writes can be dropped as it comes: it is to be replaced and nobody
   * asked for it (`hold()`), so its bytes are not worth a copy (its headers still count: those
   * of the app's layers go out with the answer). This is every replay and every shared result.
   */
  get #discarding(): boolean {
    return this.#promise === undefined && this.#pending?.kind === 'replace';
  }

  /** Whether the app has ended the response (then held, waiting for `commit`/`replaceWith`). */
  get ended(): boolean {
    return this.#appEnded;
  }

  /** Whether the response was refused (`hold()` rejected): nothing of the app's can be sent. */
  get refused(): boolean {
    return this.#state === 'refused';
  }

  /**
   * Sends what was held exactly as the app wrote it (at the moment it ends, if it has not yet).
   * Anything the app writes afterwards (a second `res.json`, `next(err)` then an error
   * handler, …) is swallowed, never thrown. Does nothing once oncely sent a response, or
   * without `hold()` (then nothing of the app's was kept to send).
   */
  commit(): void {
    if (this.#promise === undefined) return;
    if (this.#state === 'holding') {
      this.#pending = { kind: 'commit' };
    } else if (this.#state === 'ended') {
      this.#sendHeld();
    }
  }

  /**
   * Sends `response` (status, headers, body) instead of what the app wrote: at once when the app
   * already ended (or its response was refused), otherwise at the moment it ends, so a
   * framework still about to send is not told "already sent". What the app set for its own body
   * gives way to `response` (see `writeHttpResponse`); the headers its layers produced for this
   * request stay. Anything the app writes afterwards, `setHeader`/`writeHead`/`end` included, is
   * swallowed (no `ERR_HTTP_HEADERS_SENT`, no `ERR_STREAM_WRITE_AFTER_END`).
   */
  replaceWith(response: HttpResponse): void {
    if (this.#state === 'idle' && !this.#res.headersSent && !this.#res.writableEnded) {
      this.#startHolding();
    }
    if (this.#state === 'holding') {
      this.#pending = { kind: 'replace', response };
      return;
    }
    this.interrupt(response);
  }

  /**
   * Sends `response` at once, whether or not the app has ended, and swallows whatever the app
   * writes afterwards: for an answer that must not wait for the app (a refusal, a lost lease
   * while the handler still runs). Does nothing once oncely sent a response; only seals when
   * the app already sent its own.
   */
  interrupt(response: HttpResponse): void {
    if (this.#state === 'sent') return;
    if (this.#res.headersSent || this.#res.writableEnded) {
      this.#seal();
      return;
    }
    this.#send(() => {
      this.#resetToLayerHeaders();
      this.#res.statusMessage = undefined as unknown as string;
      writeHttpResponse(this.#res, response, this.#fresh);
    });
  }

  /**
   * Stops holding without sending anything: the app's own writes go straight through again,
   * from the status and headers the response had when `hold()` began (e.g. the handler threw
   * and an error handler will write). A held response is dropped. Does nothing after a refusal
   * or once oncely sent a response, so a misbehaving app can still not write twice.
   */
  release(): void {
    if (this.#state !== 'holding' && this.#state !== 'ended') return;
    this.#state = 'released';
    this.#restore();
    this.#body.clear();
    this.#held = undefined;
    const initial = this.#initial;
    if (!initial || this.#res.headersSent) return;
    this.#setHeaders(initial.headers);
    this.#res.statusCode = initial.status;
  }

  /**
   * Before an answer replaces the app's own held response: drops the headers the app set on the
   * Node response since `hold()` (the handler's, for a body that is not sent), keeping those its
   * layers produced for this request: what the response had when `hold()` began, and what the
   * platform handed over with `writeHead` (Fastify keeps its hooks' headers, CORS and helmet
   * among them, until then). Without `hold()` there is nothing of the handler's to drop.
   */
  #resetToLayerHeaders(): void {
    const initial = this.#initial;
    if (!initial) return;
    this.#setHeaders(initial.headers);
    if (this.#headReason !== undefined || this.#headFields !== undefined) {
      applyWriteHead(this.#res, this.#res.statusCode, this.#headReason, this.#headFields);
    }
  }

  /** Makes `headers` the response's only headers. */
  #setHeaders(headers: OutgoingHttpHeaders): void {
    for (const name of this.#res.getHeaderNames()) this.#res.removeHeader(name);
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) this.#res.setHeader(name, value);
    }
  }

  #holdingMethods(): Partial<Record<ResponseMethodName, ResponseMethod>> {
    const res = this.#res;
    return {
      write: (chunk, encoding, callback) => {
        const done = [encoding, callback].find((arg) => typeof arg === 'function') as
          ResponseMethod | undefined;
        this.#take(chunk, typeof encoding === 'string' ? encoding : undefined);
        if (done) process.nextTick(done);
        // Always true: a piping source keeps flowing, so a stream is captured to its end.
        return true;
      },
      end: (chunk, encoding, callback) => {
        const done = [chunk, encoding, callback].find((arg) => typeof arg === 'function') as
          ResponseMethod | undefined;
        if (done) res.once('finish', done);
        if (typeof chunk !== 'function') {
          this.#take(chunk, typeof encoding === 'string' ? encoding : undefined);
        }
        this.#appEnded = true;
        this.#finish();
        return res;
      },
      writeHead: (status, reason, headers) => {
        // Even for a body that is to be replaced: a platform that keeps its headers until it
        // writes them (Fastify: CORS, helmet, session cookies) hands them over only here.
        if (this.#state === 'holding') {
          this.#headReason = reason;
          this.#headFields = headers;
          applyWriteHead(this.#res, status, reason, headers);
        }
        return res;
      },
      flushHeaders: () => undefined,
    };
  }

  #take(chunk: unknown, encoding: string | undefined): void {
    if (this.#state !== 'holding' || chunk === undefined || chunk === null) return;
    if (this.#discarding) return;
    const refusal = this.#body.add(chunk, encoding);
    if (refusal) this.#refuse(refusal);
  }

  #finish(): void {
    if (this.#state !== 'holding') return;
    if (this.#discarding) {
      this.#state = 'ended';
      this.#seal();
      this.#runPending();
      return;
    }
    const res = this.#res;
    const status = res.statusCode;
    if (!Number.isInteger(status) || status < 100 || status > 999) {
      this.#refuse(new UnsupportedResponseError(this.#route, `the status ${String(status)}`));
      return;
    }
    const body = carriesBody(res, status) ? this.#body.take() : Buffer.alloc(0);
    this.#body.clear();
    const held: HeldResponse = {
      status,
      statusMessage: res.statusMessage,
      headers: res.getHeaders(),
      body,
    };
    this.#held = held;
    this.#state = 'ended';
    this.#seal();
    this.#resolve({
      status,
      headers: headerFields(held.headers),
      body: sentBodyOf(body, res.getHeader('content-type')),
    });
    this.#runPending();
  }

  #refuse(error: Error): void {
    if (this.#state !== 'holding') return;
    this.#body.clear();
    this.#state = 'refused';
    this.#seal();
    this.#reject(error);
    if (this.#pending?.kind === 'replace') this.interrupt(this.#pending.response);
  }

  #runPending(): void {
    if (this.#pending?.kind === 'replace') this.interrupt(this.#pending.response);
    else if (this.#pending?.kind === 'commit') this.#sendHeld();
  }

  #sendHeld(): void {
    const held = this.#held;
    if (!held) return;
    this.#send(() => {
      const res = this.#res;
      // The patch swallows header changes after the app's end; only a write around it (through
      // the prototype's own methods) can have changed them, so they are rarely set again.
      if (!hasHeaders(res, held.headers)) this.#setHeaders(held.headers);
      res.statusCode = held.status;
      res.statusMessage = held.statusMessage as string;
      res.end(held.body);
    });
  }

  /**
   * Writes with the app's methods from before the capture (dropping anything patched over them
   * since, e.g. an inner capture), then swallows what the app writes afterwards.
   */
  #send(write: () => void): void {
    this.#state = 'sent';
    this.#held = undefined;
    this.#mode = 'pass';
    try {
      if (this.#patched) this.#patched.withOriginals(write);
      else write();
    } catch {
      // The socket refused what oncely wrote (it went away): the client gets nothing, as it
      // would without oncely; a half-written response must not stay open.
      this.#res.destroy();
    }
    this.#seal();
  }

  #seal(): void {
    this.#sealed ??= sealedResponseMethods(this.#res);
    this.#enter('seal');
  }

  #enter(mode: 'hold' | 'seal'): void {
    this.#patched ??= patchResponseMethods(this.#res, this.#methodFor);
    this.#mode = mode;
  }

  /** Puts the response's methods back as they were. */
  #restore(): void {
    this.#mode = 'pass';
    this.#patched?.restore();
    this.#patched = undefined;
  }
}
