import canonicalizeModule from 'canonicalize';

// canonicalize@2 is CommonJS typed with an ESM-style `export default` that NodeNext resolves to
// the module object; at runtime the default import is the RFC 8785 serialiser itself.
const serializeJcs = canonicalizeModule as unknown as (value: unknown) => string;

/** The normalised value: plain JSON data, every object's keys inserted in sorted order. */
export type Normalized = null | boolean | number | string | Normalized[] | NormalizedObject;
export type NormalizedObject = { [key: string]: Normalized };

/** An object member or map entry on its way into the normalised value, sorted by `key`. */
export interface Entry {
  readonly key: string;
  readonly value: Normalized;
}

/** Keys JavaScript enumerates first, in numeric order, whatever their insertion order. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * The RFC 8785 text of a normalised value. For such data `JSON.stringify` writes exactly the
 * RFC 8785 text (same number and string forms, keys in insertion order) unless a key is an array
 * index, which JavaScript enumerates first: a value holding one (`hasIndexKeys`) goes through the
 * reference serialiser instead. The tests compare both routes with it on random input.
 */
export function serializeNormalized(value: Normalized, hasIndexKeys: boolean): string {
  return hasIndexKeys ? serializeJcs(value) : JSON.stringify(value);
}

/** Whether `key` is one JavaScript would enumerate before the others (see `serializeNormalized`). */
export function isArrayIndexKey(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= DIGIT_0 && first <= DIGIT_9 && ARRAY_INDEX.test(key);
}

/** Sets `target[key]`, an own data property even for `__proto__`. */
export function putMember(target: NormalizedObject, key: string, value: Normalized): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true });
  } else {
    target[key] = value;
  }
}

export const byKey = (a: Entry, b: Entry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Sorts in place by UTF-16 code units; insertion sort beats the generic sort on DTO-sized objects. */
export function sortKeys(keys: string[]): void {
  if (keys.length > 32) {
    keys.sort();
    return;
  }
  for (let index = 1; index < keys.length; index++) {
    const key = keys[index] as string;
    let slot = index - 1;
    while (slot >= 0 && (keys[slot] as string) > key) {
      keys[slot + 1] = keys[slot] as string;
      slot--;
    }
    keys[slot + 1] = key;
  }
}

/** `values` reordered by their canonical `texts` (same index), in UTF-16 code unit order. */
export function sortedByText(
  values: readonly Normalized[],
  texts: readonly string[],
): Normalized[] {
  const order = texts.map((_, index) => index);
  order.sort((a, b) => {
    const left = texts[a] as string;
    const right = texts[b] as string;
    return left < right ? -1 : left > right ? 1 : 0;
  });
  return order.map((index) => values[index] as Normalized);
}
