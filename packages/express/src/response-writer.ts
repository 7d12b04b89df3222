import { storedBodyValue, type HttpResponse, type StoredBody } from '@oncely/core';
import type { Response } from 'express';

/**
 * Writes a response oncely answers with (a replay, a problem) as is: status, headers, body
 * bytes. Through `res.end`, never `res.send`, so Express adds no ETag, charset or 304 of its own.
 */
export function writeResponse(res: Response, response: HttpResponse): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  const bytes = bytesOf(response.body);
  if (bytes === undefined) {
    res.removeHeader('content-length');
    res.end();
    return;
  }
  res.setHeader('content-length', String(bytes.byteLength));
  res.end(bytes);
}

function bytesOf(body: StoredBody): Buffer | undefined {
  if (body.kind === 'json') return Buffer.from(JSON.stringify(body.value), 'utf8');
  return storedBodyValue(body);
}
