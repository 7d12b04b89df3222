import { KeyIgnore, type KeyContext } from '@oncely/core';

/**
 * How `vectors.json` writes request values JSON cannot hold. An object whose only key is one of
 * these tags stands for the value described; every other object is plain data.
 */
export const VECTOR_INPUT_TAGS = {
  $date: 'ISO-8601 string: a Date',
  $bigint: 'decimal string: a bigint',
  $bytes: 'base64 string: a Buffer',
  $map: '[[key, value], ...]: a Map with entries in this order',
  $set: '[element, ...]: a Set with elements in this order',
  $number: '"NaN", "Infinity", "-Infinity" or "-0": that number',
  $undefined: 'true: the value undefined (an explicitly undefined property)',
  $literal: 'object: a plain object taken as is, for data keys that start with "$"',
  $dto: '{ class, ignore, fields }: an instance of class `class` whose properties listed in `ignore` carry @KeyIgnore()',
} as const;

type Tag = keyof typeof VECTOR_INPUT_TAGS;

const dtoClasses = new Map<string, new () => object>();

export function decodeVectorContext(encoded: unknown): KeyContext {
  return decodeVectorValue(encoded) as KeyContext;
}

export function decodeVectorValue(encoded: unknown): unknown {
  if (Array.isArray(encoded)) {
    return encoded.map(decodeVectorValue);
  }
  if (encoded === null || typeof encoded !== 'object') {
    return encoded;
  }
  const entries = Object.entries(encoded);
  const [first] = entries;
  if (entries.length === 1 && first && first[0].startsWith('$')) {
    return decodeTagged(first[0] as Tag, first[1]);
  }
  return decodeRecord(encoded as Record<string, unknown>);
}

function decodeRecord(encoded: Record<string, unknown>): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(encoded)) {
    Object.defineProperty(decoded, key, {
      value: decodeVectorValue(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return decoded;
}

function decodeTagged(tag: Tag, content: unknown): unknown {
  switch (tag) {
    case '$date':
      return new Date(content as string);
    case '$bigint':
      return BigInt(content as string);
    case '$bytes':
      return Buffer.from(content as string, 'base64');
    case '$map':
      return new Map(
        (content as [unknown, unknown][]).map(([key, value]) => [
          decodeVectorValue(key),
          decodeVectorValue(value),
        ]),
      );
    case '$set':
      return new Set((content as unknown[]).map(decodeVectorValue));
    case '$number':
      return content === '-0' ? -0 : Number(content);
    case '$undefined':
      return undefined;
    case '$literal':
      return decodeRecord(content as Record<string, unknown>);
    case '$dto': {
      const {
        class: name,
        ignore,
        fields,
      } = content as {
        class: string;
        ignore: string[];
        fields: Record<string, unknown>;
      };
      return Object.assign(new (dtoClass(name, ignore))(), decodeRecord(fields));
    }
    default:
      throw new Error(`Unknown vector input tag ${String(tag)}`);
  }
}

function dtoClass(name: string, ignore: readonly string[]): new () => object {
  const cacheKey = `${name}(${ignore.join(',')})`;
  const cached = dtoClasses.get(cacheKey);
  if (cached) {
    return cached;
  }
  const created = { [name]: class {} }[name] as new () => object;
  for (const property of ignore) {
    KeyIgnore()(created.prototype as object, property);
  }
  dtoClasses.set(cacheKey, created);
  return created;
}
