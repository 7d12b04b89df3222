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
  const bytes = storedBodyBytes(response.body);
  if (bytes === undefined) {
    res.removeHeader('content-length');
    res.end();
    return;
  }
  res.setHeader('content-length', String(bytes.byteLength));
  res.end(bytes);
}

/** A kept body as the bytes that go on the wire; `undefined` when it is empty. */
export function storedBodyBytes(body: StoredBody): Buffer | undefined {
  if (body.kind === 'json') return Buffer.from(JSON.stringify(body.value), 'utf8');
  return storedBodyValue(body);
}
