import type { ServerResponse } from 'node:http';
import type { StoredBody } from '../record/stored-response.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Node sends no body on `HEAD`, 1xx, 204 and 304; neither is one kept. */
export function carriesBody(res: ServerResponse, status: number): boolean {
  if ((res.req as { method?: string } | undefined)?.method === 'HEAD') return false;
  return status >= 200 && status !== 204 && status !== 304;
}

/**
 * JSON is kept as a value (readable in the record) only when re-serialising it gives back the
 * exact bytes sent; anything else is kept as bytes, so every replay is byte for byte the same.
 */
export function sentBodyOf(bytes: Buffer, contentType: unknown): StoredBody {
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
