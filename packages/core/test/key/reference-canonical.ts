import canonicalizeModule from 'canonicalize';
import type { KeyInputErrorReason } from '@oncely/core';
import { getKeyIgnoredProperties } from '../../src/key/key-ignore.decorator.js';

// canonicalize@2 is CommonJS typed with an ESM-style default export; the default import is the
// function at runtime.
const jcs = canonicalizeModule as unknown as (value: unknown) => string;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export class ReferenceRejection extends Error {
  constructor(readonly reason: KeyInputErrorReason) {
    super(reason);
  }
}

/**
 * A second, deliberately plain implementation of the documented canonical form (default
 * normalisation, no field rules): normalise into plain data, then serialise with the RFC 8785
 * reference implementation. The property tests hold `canonicalize` to it byte for byte.
 */
export function referenceCanonicalize(value: unknown): string {
  if (value === undefined) {
    throw new ReferenceRejection('unsupported_type');
  }
  return jcs(normalize(value));
}

function normalize(value: unknown): unknown {
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) {
      throw new ReferenceRejection('malformed_unicode');
    }
    return value.normalize('NFC').split('\r\n').join('\n').trim();
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new ReferenceRejection('non_finite_number');
    }
    return Object.is(value, -0) ? 0 : value;
  }
  if (typeof value === 'boolean' || value === null) {
    return value;
  }
  if (typeof value === 'bigint') {
    return tag('$bigint', value.toString());
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) {
      throw new ReferenceRejection('unsupported_type');
    }
    return value.toISOString();
  }
  if (value instanceof Uint8Array) {
    return tag('$bytes', Buffer.from(value).toString('base64'));
  }
  if (value instanceof Map) {
    const entries = [...(value as Map<unknown, unknown>)].map(([key, member]) => [
      normalize(key ?? null),
      normalize(member ?? null),
    ]);
    entries.sort((a, b) => compareText(jcs(a[0]), jcs(b[0])));
    entries.forEach((entry, index) => {
      if (index > 0 && jcs(entry[0]) === jcs(entries[index - 1]?.[0])) {
        throw new ReferenceRejection('duplicate_key');
      }
    });
    return tag('$map', entries);
  }
  if (value instanceof Set) {
    const byText = new Map<string, unknown>();
    for (const element of value as Set<unknown>) {
      const normalized = normalize(element ?? null);
      byText.set(jcs(normalized), normalized);
    }
    return tag(
      '$set',
      [...byText.keys()].sort(compareText).map((text) => byText.get(text)),
    );
  }
  if (Array.isArray(value)) {
    return value.map((element) => (element === undefined ? null : normalize(element)));
  }
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value) as { constructor?: unknown } | null;
    const ignored =
      prototype && prototype !== Object.prototype && typeof prototype.constructor === 'function'
        ? getKeyIgnoredProperties(prototype.constructor as new () => unknown)
        : new Set<string>();
    const result = Object.create(null) as Record<string, unknown>;
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined || ignored.has(key)) {
        continue;
      }
      if (LONE_SURROGATE.test(key)) {
        throw new ReferenceRejection('malformed_unicode');
      }
      const composed = key.normalize('NFC');
      const name = composed.startsWith('$') ? `$${composed}` : composed;
      if (Object.prototype.hasOwnProperty.call(result, name)) {
        throw new ReferenceRejection('duplicate_key');
      }
      result[name] = normalize(member);
    }
    return result;
  }
  throw new ReferenceRejection('unsupported_type');
}

function tag(name: string, content: unknown): unknown {
  const tagged = Object.create(null) as Record<string, unknown>;
  tagged[name] = content;
  return tagged;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
