import {
  UnsupportedResponseError,
  storedBodyValue,
  type HttpResponse,
  type ProtectedCallResult,
  type StoredBody,
} from '@oncely/core';
import { Readable } from 'node:stream';

/**
 * A non-HTTP result (a provider method's, a message handler's, a resolver's) as the executor
 * keeps it: always a success, since throwing is how such handlers fail.
 */
export function callResponseOf(value: unknown, name: string): HttpResponse {
  return { status: 200, headers: {}, body: storedValueOf(value, name) };
}

/** What the caller gets back: the handler's own value, or the kept one for a replay. */
export function callValueOf(result: ProtectedCallResult): unknown {
  return storedBodyValue(result.response.body);
}

function storedValueOf(value: unknown, name: string): StoredBody {
  if (value === undefined || value === null) return { kind: 'empty' };
  if (value instanceof Readable) throw new UnsupportedResponseError(name, 'a Readable stream');
  if (value instanceof ReadableStream) throw new UnsupportedResponseError(name, 'a ReadableStream');
  if (typeof value === 'function') throw new UnsupportedResponseError(name, 'a function');
  if (value instanceof Uint8Array) return { kind: 'bytes', value };
  return { kind: 'json', value };
}
