import { Readable } from 'node:stream';
import type { StoredBody } from '../record/stored-response.js';
import { UnsupportedResponseError } from './unsupported-response.error.js';

/**
 * A value a handler returned as a record or result cache keeps it: nothing for `undefined` and
 * `null`, bytes for a `Uint8Array`, JSON for anything else. Refuses what cannot be kept whole
 * (streams, web responses, functions), naming `route` in the error. `storedBodyValue` is its
 * inverse: what a replay hands back.
 */
export function storedBodyOf(value: unknown, route: string): StoredBody {
  if (value === undefined || value === null) return { kind: 'empty' };
  switch (typeof value) {
    case 'object':
      break;
    case 'function':
    case 'symbol':
    case 'bigint':
      throw new UnsupportedResponseError(route, `a ${typeof value}`);
    default:
      return { kind: 'json', value };
  }
  if (value instanceof Uint8Array) return { kind: 'bytes', value };
  if (value instanceof Readable) throw new UnsupportedResponseError(route, 'a Readable stream');
  // Checked only for non-plain objects: the first touch of these globals loads Node's fetch
  // implementation (~90 ms), which no ordinary JSON value should pay for.
  if (Object.getPrototypeOf(value) !== Object.prototype && !Array.isArray(value)) {
    if (value instanceof ReadableStream) {
      throw new UnsupportedResponseError(route, 'a ReadableStream');
    }
    if (value instanceof Response) throw new UnsupportedResponseError(route, 'a web Response');
  }
  return { kind: 'json', value };
}
