import { ResultNotSerializableError } from './result-not-serializable.error.js';
import { ResultTooLargeError } from './result-too-large.error.js';

/** Default `maxResultBytes`: results are cached in the coordinator's store, so keep them small. */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;

/**
 * Tag property marking values JSON cannot carry. A plain object that happens to own this key is
 * wrapped in an `object` tag, so user data can never be mistaken for a tag.
 */
const TAG = '$t';
const TAG_KEY_TEXT = `${JSON.stringify(TAG)}:`;

type Tagged =
  | { [TAG]: 'undefined' }
  | { [TAG]: 'date'; v: string | null }
  | { [TAG]: 'buffer'; v: string }
  | { [TAG]: 'bytes'; v: string }
  | { [TAG]: 'bigint'; v: string }
  | { [TAG]: 'object'; v: Record<string, unknown> };

/**
 * Lossless text form of flight results and shared errors, as stored by coordinators.
 *
 * Carries JSON-compatible values plus, anywhere in the value, `Date` (invalid dates included),
 * `Buffer` (decoded as `Buffer`), other `Uint8Array`s (decoded as plain `Uint8Array`), `bigint`,
 * and `undefined` (at the top level and as array items; object properties holding `undefined`
 * are dropped, as JSON does). Objects with `toJSON` (other than `Date`) are stored as what it
 * returns, as `JSON.stringify` would. Anything else that would come back different — functions,
 * symbols, `Map`, `Set`, other typed arrays, non-finite numbers, cycles — is refused with
 * `ResultNotSerializableError` rather than silently altered. Payloads above `maxBytes` (UTF-8)
 * are refused with `ResultTooLargeError` before anything is stored.
 */
export class ResultCodec {
  constructor(readonly maxBytes: number = DEFAULT_MAX_RESULT_BYTES) {}

  encode(value: unknown): string {
    const payload = JSON.stringify(encodeValue(value, '$', new Set()));
    // UTF-8 needs at most 3 bytes per UTF-16 unit, so short payloads skip the exact count.
    if (payload.length * 3 > this.maxBytes) {
      const sizeBytes = Buffer.byteLength(payload, 'utf8');
      if (sizeBytes > this.maxBytes) throw new ResultTooLargeError(sizeBytes, this.maxBytes);
    }
    return payload;
  }

  decode(payload: string): unknown {
    const parsed: unknown = JSON.parse(payload);
    // `JSON.stringify` writes every tag key as exactly `"$t":`; a payload without that text holds
    // no tag, and what `JSON.parse` built (`__proto__` keys included, as own properties) is the
    // value itself, with no second walk over it.
    return payload.includes(TAG_KEY_TEXT) ? decodeValue(parsed) : parsed;
  }
}

function encodeValue(value: unknown, path: string, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) {
        throw new ResultNotSerializableError(path, `${value} is not a finite number`);
      }
      return value;
    case 'undefined':
      return { [TAG]: 'undefined' } satisfies Tagged;
    case 'bigint':
      return { [TAG]: 'bigint', v: value.toString() } satisfies Tagged;
    case 'function':
    case 'symbol':
      throw new ResultNotSerializableError(path, `a ${typeof value} cannot be serialised`);
  }
  if (value === null) return null;
  const object = value as object;
  if (object instanceof Date) {
    const time = object.getTime();
    return { [TAG]: 'date', v: Number.isNaN(time) ? null : object.toISOString() } satisfies Tagged;
  }
  if (Buffer.isBuffer(object)) {
    return { [TAG]: 'buffer', v: object.toString('base64') } satisfies Tagged;
  }
  if (object instanceof Uint8Array) {
    const base64 = Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString(
      'base64',
    );
    return { [TAG]: 'bytes', v: base64 } satisfies Tagged;
  }
  if (ancestors.has(object)) throw new ResultNotSerializableError(path, 'the value is circular');
  ancestors.add(object);
  try {
    return encodeObject(object, path, ancestors);
  } finally {
    ancestors.delete(object);
  }
}

function encodeObject(object: object, path: string, ancestors: Set<object>): unknown {
  if (Array.isArray(object)) {
    return object.map((item: unknown, index) => encodeValue(item, `${path}[${index}]`, ancestors));
  }
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    return encodeValue(toJSON.call(object), path, ancestors);
  }
  if (object instanceof Map || object instanceof Set || ArrayBuffer.isView(object)) {
    const kind = object.constructor.name;
    throw new ResultNotSerializableError(path, `a ${kind} would not survive JSON`);
  }
  if (object instanceof ArrayBuffer || object instanceof Promise || object instanceof RegExp) {
    throw new ResultNotSerializableError(path, `a ${object.constructor.name} cannot be serialised`);
  }
  const encoded: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(object)) {
    if (item !== undefined) setOwn(encoded, name, encodeValue(item, `${path}.${name}`, ancestors));
  }
  return Object.hasOwn(encoded, TAG) ? ({ [TAG]: 'object', v: encoded } satisfies Tagged) : encoded;
}

function decodeValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(decodeValue);
  const record = value as Record<string, unknown>;
  if (!Object.hasOwn(record, TAG)) return decodeEntries(record);
  const tagged = record as Tagged;
  switch (tagged[TAG]) {
    case 'undefined':
      return undefined;
    case 'date':
      return new Date(tagged.v ?? Number.NaN);
    case 'buffer':
      return Buffer.from(tagged.v, 'base64');
    case 'bytes':
      return new Uint8Array(Buffer.from(tagged.v, 'base64'));
    case 'bigint':
      return BigInt(tagged.v);
    case 'object':
      return decodeEntries(tagged.v);
    default:
      throw new SyntaxError(`Unknown oncely result tag ${JSON.stringify(record[TAG])}`);
  }
}

function decodeEntries(record: Record<string, unknown>): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(record)) setOwn(decoded, name, decodeValue(item));
  return decoded;
}

/** Plain assignment would turn a `__proto__` key into a prototype change. */
function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') {
    Object.defineProperty(target, name, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[name] = value;
  }
}
