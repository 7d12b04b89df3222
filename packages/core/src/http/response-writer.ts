import type { ServerResponse } from 'node:http';
import { answerPayload } from './answer-body.js';
import type { HttpResponse } from './http-response.js';
import { DEFAULT_REPLAY_HEADERS } from './replay-header-policy.js';

/**
 * Whether the request is answered `304 Not Modified` by the response as it stands (status and
 * headers set), the way the platform decides it for the first answer: Express's `req.fresh`.
 * Absent where the platform answers no conditional request itself (Fastify without a plugin).
 */
export type FreshnessCheck = (res: ServerResponse) => boolean;

/**
 * Express's own check, `req.fresh` (method `GET`/`HEAD`, a 2xx status, `If-None-Match` /
 * `If-Modified-Since` against the response's `ETag` / `Last-Modified`), read without importing
 * Express: what `res.send` answers 304 by, on plain Express and Nest's Express platform alike.
 */
export const expressFreshness: FreshnessCheck = (res) =>
  (res.req as { fresh?: unknown } | undefined)?.fresh === true;

/**
 * Headers that describe a body. Whatever the response already carries of these was produced for
 * a body oncely does not send (the value the platform was handed for a replay, the handler's
 * response a problem replaces), so only the answer's own are sent. `Vary` is not among them:
 * it says what the response depends on, and the layers' values (CORS's `Origin`) are merged.
 */
const BODY_HEADERS: ReadonlySet<string> = new Set([
  ...DEFAULT_REPLAY_HEADERS.filter((name) => name !== 'vary'),
  'content-length',
  'content-encoding',
  'content-range',
  'content-disposition',
]);

/**
 * Writes a response oncely answers with (a replay, a shared result, a problem) on a raw Node
 * response, following the one rule for what such an answer is (docs/http.md, "Which headers a
 * replay carries"): the answer's status, body bytes with their exact length and its headers,
 * merged with every header already produced for this request by anything but the handler (CORS,
 * security headers, request ids, cookies set when headers are written). A header both carry is
 * the answer's, but for `Vary`, whose values are merged. Through `res.end`, so no framework adds
 * a charset or an ETag of its own; with `fresh`, a `GET` whose validators match is answered 304
 * as the platform would have answered the first. A response already sent is only ended.
 */
export function writeHttpResponse(
  res: ServerResponse,
  response: HttpResponse,
  fresh?: FreshnessCheck,
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.statusCode = response.status;
  setAnswerHeaders(res, response);
  if (fresh?.(res)) {
    // As Express answers a fresh request: validators kept, the body and its description not.
    res.statusCode = 304;
    res.removeHeader('content-type');
    res.end();
    return;
  }
  const body = answerPayload(response.body);
  if (body === undefined) {
    res.end();
    return;
  }
  const length = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
  res.setHeader('content-length', String(length));
  res.end(body, 'utf8');
}

/**
 * Where the headers of an answer are set: a Node response, or a framework's reply in front of one
 * (Fastify's keeps its hooks' headers until it writes them).
 */
export interface AnswerHeaderTarget {
  getHeaderNames(): string[];
  getHeader(name: string): number | string | string[] | undefined;
  setHeader(name: string, value: string): unknown;
  removeHeader(name: string): unknown;
}

/**
 * The header half of the one rule (see `writeHttpResponse`): what `target` carries of a body
 * oncely does not send is dropped, the answer's headers are set over the rest, `Vary` merged.
 */
export function setAnswerHeaders(target: AnswerHeaderTarget, response: HttpResponse): void {
  for (const name of target.getHeaderNames()) {
    if (BODY_HEADERS.has(name)) target.removeHeader(name);
  }
  for (const [name, value] of Object.entries(response.headers)) {
    target.setHeader(name, name === 'vary' ? mergedVary(target.getHeader('vary'), value) : value);
  }
}

/** The answer's `Vary` with the values the response already had, each field name once. */
function mergedVary(current: number | string | string[] | undefined, answer: string): string {
  if (current === undefined) return answer;
  const fresh = Array.isArray(current) ? current.join(', ') : String(current);
  if (fresh.trim() === '*' || answer.trim() === '*') return '*';
  const names = new Map<string, string>();
  for (const field of `${answer},${fresh}`.split(',')) {
    const name = field.trim();
    if (name !== '' && !names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
  }
  return [...names.values()].join(', ');
}
