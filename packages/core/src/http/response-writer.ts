import type { ServerResponse } from 'node:http';
import type { StoredBody } from '../record/stored-response.js';
import { storedBodyValue, type HttpResponse } from './http-response.js';

/**
 * Writes a response oncely answers with (a replay, a problem) on a raw Node response as is:
 * status, headers, body bytes with their exact length. Through `res.end`, so no framework adds an
 * ETag, a charset or a 304 of its own. A response already sent is only ended.
 */
export function writeHttpResponse(res: ServerResponse, response: HttpResponse): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  const body = wireBody(response.body);
  if (body === undefined) {
    res.removeHeader('content-length');
    res.end();
    return;
  }
  const length = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
  res.setHeader('content-length', String(length));
  res.end(body, 'utf8');
}

/**
 * A kept body as it goes on the wire; `undefined` when it is empty. JSON stays a string: Node
 * sends a string body in one write with the headers, a buffer in a second one.
 */
function wireBody(body: StoredBody): string | Buffer | undefined {
  if (body.kind === 'json') return JSON.stringify(body.value);
  return storedBodyValue(body);
}
