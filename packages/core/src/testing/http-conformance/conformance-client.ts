import type { ConformanceApp } from './conformance-harness.js';

/** A response as the cases look at it. Header names are lower-case. */
export interface ConformanceResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** Header values by lower-case name, repeated headers joined as `fetch` joins them. */
  readonly headers: Readonly<Record<string, string>>;
  /** Every `set-cookie` header, one entry each (they cannot be joined). */
  readonly setCookie: readonly string[];
  /** The body exactly as received, for byte-for-byte replay checks. */
  readonly bytes: Buffer;
  /** The body decoded as UTF-8. */
  readonly text: string;
  /** The parsed JSON body, or `undefined` when the body is not JSON. */
  readonly body: Record<string, unknown> | undefined;
}

/** One request of a case; every field is optional. */
export interface ConformanceRequest {
  /** Sent as `idempotency-key` when given. */
  readonly key?: string;
  /** Sent as `x-tenant` when given. */
  readonly tenant?: string;
  /** Sent as `x-principal`, JSON with every non-ASCII character escaped. */
  readonly principal?: unknown;
  /** Further headers, sent as given. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON; `{}` when neither this nor `rawBody` is given on a POST. */
  readonly body?: unknown;
  /** Sent as is, declared as JSON. */
  readonly rawBody?: string;
  /** Sent as `multipart/form-data` (files and fields), instead of a JSON body. */
  readonly form?: FormData;
  /** Aborts the request: the client leaves. */
  readonly signal?: AbortSignal;
}

/** JSON whose non-ASCII characters are `\u` escapes, so it fits a header byte for byte. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Methods sent without a body, whatever the request says. */
const BODILESS_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Speaks HTTP to one app with `fetch`, over kept-alive connections. */
export class ConformanceClient {
  constructor(private readonly app: ConformanceApp) {}

  /** Sends a `POST` to `path` on the app. */
  post(path: string, request: ConformanceRequest = {}): Promise<ConformanceResponse> {
    return this.send('POST', path, request);
  }

  /** Sends a `GET` to `path` on the app; `body` and `rawBody` are not sent. */
  get(path: string, request: ConformanceRequest = {}): Promise<ConformanceResponse> {
    return this.send('GET', path, request);
  }

  /**
   * Sends one request; `body` and `rawBody` go only with a method that carries one (not `GET`,
   * `HEAD` or `OPTIONS`). A request still pending when its case fails is cut when the app closes;
   * that rejection is marked handled here so it does not bury the case's own failure.
   */
  send(method: string, path: string, request: ConformanceRequest): Promise<ConformanceResponse> {
    const pending = this.exchange(method, path, request);
    pending.catch(() => undefined);
    return pending;
  }

  private async exchange(
    method: string,
    path: string,
    request: ConformanceRequest,
  ): Promise<ConformanceResponse> {
    const headers: Record<string, string> = { ...request.headers };
    if (request.key !== undefined) headers['idempotency-key'] = request.key;
    if (request.tenant !== undefined) headers['x-tenant'] = request.tenant;
    if (request.principal !== undefined) headers['x-principal'] = asciiJson(request.principal);
    let body: string | FormData | undefined;
    if (!BODILESS_METHODS.has(method)) {
      if (request.form) {
        // fetch writes the multipart content type, with its boundary.
        body = request.form;
      } else {
        headers['content-type'] ??= 'application/json';
        body = request.rawBody ?? JSON.stringify(request.body ?? {});
      }
    }
    const response = await fetch(`${this.app.baseUrl}${path}`, {
      method,
      headers,
      body,
      ...(request.signal && { signal: request.signal }),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const text = bytes.toString('utf8');
    let parsed: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(text);
      parsed = typeof value === 'object' && value !== null ? (value as typeof parsed) : undefined;
    } catch {
      parsed = undefined;
    }
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      setCookie: response.headers.getSetCookie(),
      bytes,
      text,
      body: parsed,
    };
  }
}
