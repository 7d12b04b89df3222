import { Readable } from 'node:stream';
import { ResultNotSerializableError } from './result-not-serializable.error.js';

/**
 * How faithfully a value must come back.
 *
 * - `exact`: for callers in the same program (provider methods): what comes back has the same
 *   types as what went in, or the value is refused. Class instances and objects with `toJSON`
 *   are refused (they would come back as plain objects); `undefined` properties are kept.
 * - `json`: for values a transport serialises as JSON anyway (HTTP bodies, messages, GraphQL):
 *   objects are kept as `JSON.stringify` would send them (`toJSON` honoured, class instances as
 *   their own enumerable properties, `undefined` properties dropped), while `Date`, bytes,
 *   `bigint`, `Map` and `Set` still come back as themselves.
 */
export type ValueFidelity = 'exact' | 'json';

/**
 * Tag property marking values JSON cannot carry. A plain object that happens to own this key is
 * wrapped in an `object` tag, so user data can never be mistaken for a tag.
 */
export const TAG = '$t';

type Tagged =
  | { [TAG]: 'undefined' }
  | { [TAG]: 'date'; v: string | null }
  | { [TAG]: 'buffer'; v: string }
  | { [TAG]: 'bytes'; v: string }
  | { [TAG]: 'bigint'; v: string }
  | { [TAG]: 'map'; v: Array<[unknown, unknown]> }
  | { [TAG]: 'set'; v: unknown[] }
  | { [TAG]: 'object'; v: Record<string, unknown> };

/**
 * `value` as a tree `JSON.stringify` keeps whole: JSON values as they are, and tagged objects for
 * `undefined`, `Date` (invalid ones included), `Buffer`, other `Uint8Array`s, `bigint`, `Map`
 * and `Set`, anywhere in the value. Anything that would come back different — functions,
 * symbols, other typed arrays, non-finite numbers, cycles, and under `exact` class instances —
 * is refused with `ResultNotSerializableError` naming where it is.
 */
export function toValueTree(value: unknown, fidelity: ValueFidelity): unknown {
  return encodeValue(value, '$', new Set(), fidelity === 'exact');
}

/** The value a tree of `toValueTree` stands for. */
export function fromValueTree(tree: unknown): unknown {
  if (typeof tree !== 'object' || tree === null) return tree;
  if (Array.isArray(tree)) return tree.map(fromValueTree);
  const record = tree as Record<string, unknown>;
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
    case 'map':
      return new Map(tagged.v.map(([key, item]) => [fromValueTree(key), fromValueTree(item)]));
    case 'set':
      return new Set(tagged.v.map(fromValueTree));
    case 'object':
      return decodeEntries(tagged.v);
    default:
      throw new SyntaxError(`Unknown oncely value tag ${JSON.stringify(record[TAG])}`);
  }
}

function encodeValue(
  value: unknown,
  path: string,
  ancestors: Set<object>,
  exact: boolean,
): unknown {
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
  if (object instanceof Uint8Array && object.constructor === Uint8Array) {
    const base64 = Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString(
      'base64',
    );
    return { [TAG]: 'bytes', v: base64 } satisfies Tagged;
  }
  if (ancestors.has(object)) throw new ResultNotSerializableError(path, 'the value is circular');
  ancestors.add(object);
  try {
    return encodeObject(object, path, ancestors, exact);
  } finally {
    ancestors.delete(object);
  }
}

function encodeObject(
  object: object,
  path: string,
  ancestors: Set<object>,
  exact: boolean,
): unknown {
  if (Array.isArray(object)) {
    return object.map((item: unknown, index) =>
      encodeValue(item, `${path}[${index}]`, ancestors, exact),
    );
  }
  if (object instanceof Map && object.constructor === Map) {
    const entries = [...object].map(
      ([key, item]: [unknown, unknown], index): [unknown, unknown] => [
        encodeValue(key, `${path}.<key ${index}>`, ancestors, exact),
        encodeValue(item, `${path}.<value ${index}>`, ancestors, exact),
      ],
    );
    return { [TAG]: 'map', v: entries } satisfies Tagged;
  }
  if (object instanceof Set && object.constructor === Set) {
    const items = [...object].map((item: unknown, index) =>
      encodeValue(item, `${path}.<item ${index}>`, ancestors, exact),
    );
    return { [TAG]: 'set', v: items } satisfies Tagged;
  }
  const prototype: unknown = Object.getPrototypeOf(object);
  const plain = prototype === Object.prototype || prototype === null;
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (!plain && isUnkeepable(object)) {
    throw new ResultNotSerializableError(path, `${describe(object)} cannot be serialised`);
  }
  if (exact && (!plain || typeof toJSON === 'function')) {
    throw new ResultNotSerializableError(
      path,
      `${describe(object)} would come back as a plain object`,
    );
  }
  if (typeof toJSON === 'function') {
    return encodeValue(toJSON.call(object), path, ancestors, exact);
  }
  const encoded: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(object)) {
    if (item !== undefined || exact) {
      setOwn(encoded, name, encodeValue(item, `${path}.${name}`, ancestors, exact));
    }
  }
  return Object.hasOwn(encoded, TAG) ? ({ [TAG]: 'object', v: encoded } satisfies Tagged) : encoded;
}

/**
 * Built-ins whose state is not in their enumerable properties: JSON would keep nothing of it.
 * Asked of class instances only: the first touch of `ReadableStream` or `Response` loads Node's
 * fetch implementation (~90 ms), which no plain value should pay for.
 */
function isUnkeepable(object: object): boolean {
  return (
    object instanceof Readable ||
    object instanceof ReadableStream ||
    object instanceof Response ||
    ArrayBuffer.isView(object) ||
    object instanceof ArrayBuffer ||
    object instanceof Map ||
    object instanceof Set ||
    object instanceof WeakMap ||
    object instanceof WeakSet ||
    object instanceof Promise ||
    object instanceof RegExp
  );
}

function describe(object: object): string {
  const name = (object.constructor as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object'
    ? `an instance of ${name}`
    : 'an object with toJSON';
}

function decodeEntries(record: Record<string, unknown>): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(record)) setOwn(decoded, name, fromValueTree(item));
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
