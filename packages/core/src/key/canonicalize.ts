import canonicalizeModule from 'canonicalize';
import { types } from 'node:util';
import {
  compileCanonicalRules,
  descendRules,
  isUnorderedAt,
  normalizationAt,
  rulesAtRoot,
  WILDCARD,
  type RuleNode,
} from './canonical-rules.js';
import { ignoredPropertiesOf } from './key-ignore.decorator.js';
import { KeyInputError } from './key-input.error.js';
import { KeySpecError } from './key-spec.error.js';
import { MAX_CANONICAL_INPUT_LENGTH, MAX_INPUT_DEPTH } from './key.constants.js';
import type { CanonicalizeOptions, StringNormalization } from './key.types.js';
import { describeValue, isWellFormed } from './text.js';

// canonicalize@2 is CommonJS typed with an ESM-style `export default` that NodeNext resolves to
// the module object; at runtime the default import is the RFC 8785 serialiser itself.
const serializeJcs = canonicalizeModule as unknown as (value: unknown) => string;

/** The normalised value: plain JSON data, every object's keys inserted in sorted order. */
type Normalized = null | boolean | number | string | Normalized[] | NormalizedObject;
type NormalizedObject = { [key: string]: Normalized };

/** Any code unit outside ASCII: only such strings can need NFC or hold a lone surrogate. */
const NON_ASCII = /[\u0080-\uffff]/;
/** Keys JavaScript enumerates first, in numeric order, whatever their insertion order. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
/** Tags start with one `$`; a data key starting with `$` gets a second one, so none can forge a tag. */
const DOLLAR = 0x24;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const NO_RULES: readonly RuleNode[] = [];
const DEFAULT_NORMALIZATION: StringNormalization = 'trim';

const compiledOptions = new WeakMap<CanonicalizeOptions, RuleNode | undefined>();

/**
 * The canonical text of `value`: RFC 8785 (JCS) over the value normalised as follows.
 *
 * - objects: own enumerable string keys, sorted by UTF-16 code units as JCS requires;
 *   `undefined` members dropped, `null` kept; keys in Unicode NFC; properties marked
 *   `@KeyIgnore()` on class instances left out; a key starting with `$` gets one more `$` in
 *   front (tags below start with a single `$`).
 * - strings: per the field's `StringNormalization` (default `'trim'`: NFC, CRLF to LF, trimmed).
 * - numbers: finite only (NaN and ±Infinity raise `KeyInputError`), `-0` becomes `0`; decimal
 *   strings such as `"100.00"` are strings and stay exactly as they are.
 * - arrays keep their order (`undefined` elements become `null`, as in JSON), unless declared
 *   unordered: then they are sorted by their elements' canonical text (UTF-16 code unit order).
 * - `Date` becomes its ISO-8601 UTC string, as `JSON.stringify` would write it.
 * - tagged, so they collide neither with strings nor with each other: bigint
 *   `{"$bigint":"<decimal>"}`, `Buffer`/`Uint8Array` `{"$bytes":"<base64>"}`, `Set`
 *   `{"$set":[<elements sorted by canonical text, duplicates removed>]}`, `Map`
 *   `{"$map":[[<key>,<value>],… sorted by the key's canonical text]}`.
 * - anything else (functions, symbols, other built-ins such as RegExp or Decimal) raises
 *   `KeyInputError`, as do cycles, nesting deeper than `MAX_INPUT_DEPTH` and canonical text
 *   longer than `MAX_CANONICAL_INPUT_LENGTH`. A value that survives a JSON round trip
 *   canonicalises to the same text as its round-tripped copy.
 *
 * Paths in `options` are relative to `value` itself.
 */
export function canonicalize(value: unknown, options?: CanonicalizeOptions): string {
  return canonicalText(value, rulesFor(options));
}

/** `canonicalize` with rules compiled beforehand (by `buildKey`'s spec compiler). */
export function canonicalText(value: unknown, rules: RuleNode | undefined): string {
  const nodes = rulesAtRoot(rules);
  return new Canonicalizer().text(value, nodes, normalizationAt(nodes, DEFAULT_NORMALIZATION));
}

function rulesFor(options: CanonicalizeOptions | undefined): RuleNode | undefined {
  if (!options) {
    return undefined;
  }
  if (!compiledOptions.has(options)) {
    checkOptions(options);
    compiledOptions.set(options, compileCanonicalRules(options, optionPathSegments));
  }
  return compiledOptions.get(options);
}

function checkOptions(options: CanonicalizeOptions): void {
  for (const [path, rule] of Object.entries(options.normalize ?? {})) {
    if (rule !== 'exact' && rule !== 'trim' && typeof rule !== 'function') {
      throw new KeySpecError(
        'canonicalize options',
        `normalize['${path}']`,
        `must be 'exact', 'trim' or a function.`,
      );
    }
  }
  if (options.unordered !== undefined && !Array.isArray(options.unordered)) {
    throw new KeySpecError(
      'canonicalize options',
      'unordered',
      `must be an array of paths such as 'tags'.`,
    );
  }
}

function optionPathSegments(path: string): readonly string[] {
  const segments = path.split('.');
  if (segments.some((segment) => segment === '')) {
    throw new KeySpecError(
      'canonicalize options',
      `path '${path}'`,
      'has an empty segment; write property names separated by single dots.',
    );
  }
  return segments;
}

/** An object member or map entry on its way into the normalised value, sorted by `key`. */
interface Entry {
  readonly key: string;
  readonly value: Normalized;
}

const byKey = (a: Entry, b: Entry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Normalises a value into plain JSON data whose objects hold their keys in sorted order, then
 * serialises it. For such data, `JSON.stringify` writes exactly the RFC 8785 text (same number
 * and string forms, keys in insertion order) unless a key is an array index, which JavaScript
 * enumerates first; values holding one go through the reference serialiser instead. The tests
 * compare both routes with the reference serialiser on random input.
 */
class Canonicalizer {
  /** Objects being normalised, outermost first; short (at most MAX_INPUT_DEPTH), so an array. */
  private readonly ancestors: object[] = [];
  private readonly path: (string | number)[] = [];
  private size = 0;
  /** How many array-index keys were met so far: any forces the reference serialiser. */
  private indexKeys = 0;

  text(value: unknown, nodes: readonly RuleNode[], normalization: StringNormalization): string {
    if (value === undefined) {
      throw this.error('unsupported_type', 'undefined');
    }
    const text = this.serialize(this.value(value, nodes, normalization, 0), 0);
    if (text.length > MAX_CANONICAL_INPUT_LENGTH) {
      throw this.error('too_large');
    }
    return text;
  }

  /** RFC 8785 text of a normalised value built while `indexKeys` grew from `indexKeysBefore`. */
  private serialize(value: Normalized, indexKeysBefore: number): string {
    return this.indexKeys === indexKeysBefore ? JSON.stringify(value) : serializeJcs(value);
  }

  private value(
    value: unknown,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): Normalized {
    switch (typeof value) {
      case 'string':
        return this.string(value, normalization);
      case 'number':
        if (!Number.isFinite(value)) {
          throw this.error('non_finite_number', String(value));
        }
        this.grow(1);
        // Serialised with ECMAScript's number-to-string, as RFC 8785 requires: -0 is written 0.
        return value;
      case 'boolean':
        this.grow(1);
        return value;
      case 'bigint':
        return { $bigint: this.grow(value.toString()) };
      case 'object':
        if (value === null) {
          this.grow(1);
          return null;
        }
        return this.object(value, nodes, normalization, depth);
      default:
        throw this.error('unsupported_type', `a ${typeof value}`);
    }
  }

  private ruledValue(
    value: unknown,
    nodes: readonly RuleNode[],
    inherited: StringNormalization,
    depth: number,
  ): Normalized {
    return this.value(value, nodes, normalizationAt(nodes, inherited), depth);
  }

  private object(
    value: object,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): Normalized {
    if (depth >= MAX_INPUT_DEPTH) {
      throw this.error('too_deep');
    }
    if (this.ancestors.includes(value)) {
      throw this.error('cycle');
    }
    this.ancestors.push(value);
    const normalized = this.dispatch(value, nodes, normalization, depth + 1);
    this.ancestors.pop();
    return normalized;
  }

  private dispatch(
    value: object,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): Normalized {
    if (Array.isArray(value)) {
      return this.array(value, nodes, normalization, depth);
    }
    const prototype = Object.getPrototypeOf(value) as object | null;
    if (prototype === Object.prototype || prototype === null) {
      return this.record(value as Record<string, unknown>, nodes, normalization, depth, prototype);
    }
    if (types.isDate(value)) {
      return this.date(value);
    }
    if (types.isUint8Array(value)) {
      const bytes = value;
      const base64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
        'base64',
      );
      return { $bytes: this.grow(base64) };
    }
    if (types.isMap(value)) {
      return this.map(value, nodes, normalization, depth);
    }
    if (types.isSet(value)) {
      return this.set(value, nodes, normalization, depth);
    }
    const kind = Object.prototype.toString.call(value);
    if (kind !== '[object Object]') {
      throw this.error('unsupported_type', `a ${kind.slice(8, -1)}`);
    }
    return this.record(value as Record<string, unknown>, nodes, normalization, depth, prototype);
  }

  private record(
    value: Record<string, unknown>,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
    prototype: object | null,
  ): NormalizedObject {
    const ignored = ignoredPropertiesOf(prototype);
    const keys = Object.keys(value);
    for (const key of keys) {
      if (NON_ASCII.test(key)) {
        return this.composedRecord(value, keys, ignored, nodes, normalization, depth);
      }
    }
    // ASCII keys are their own NFC form, and doubling a leading `$` keeps their order, so
    // sorting the raw keys sorts the canonical ones.
    sortKeys(keys);
    const normalized: NormalizedObject = {};
    for (const key of keys) {
      const member = value[key];
      if (member === undefined || ignored.has(key)) {
        continue;
      }
      this.path.push(key);
      const memberValue =
        nodes.length === 0
          ? this.value(member, nodes, normalization, depth)
          : this.ruledValue(member, descendRules(nodes, key), normalization, depth);
      this.path.pop();
      this.put(normalized, this.dataKey(key), memberValue);
    }
    return normalized;
  }

  /** `record` for objects with non-ASCII keys, which NFC may reorder or merge. */
  private composedRecord(
    value: Record<string, unknown>,
    keys: readonly string[],
    ignored: ReadonlySet<string>,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): NormalizedObject {
    const entries: Entry[] = [];
    for (const key of keys) {
      const member = value[key];
      if (member === undefined || ignored.has(key)) {
        continue;
      }
      this.path.push(key);
      const memberNodes = descendRules(nodes, key);
      entries.push({
        key: this.composedKey(key),
        value: this.value(member, memberNodes, normalizationAt(memberNodes, normalization), depth),
      });
      this.path.pop();
    }
    entries.sort(byKey);
    const normalized: NormalizedObject = {};
    for (let index = 0; index < entries.length; index++) {
      const { key, value: memberValue } = entries[index] as Entry;
      if (index > 0 && key === (entries[index - 1] as Entry).key) {
        this.path.push(key);
        throw this.error('duplicate_key', 'property names');
      }
      this.put(normalized, key, memberValue);
    }
    return normalized;
  }

  private put(target: NormalizedObject, key: string, value: Normalized): void {
    const first = key.charCodeAt(0);
    if (first >= DIGIT_0 && first <= DIGIT_9 && ARRAY_INDEX.test(key)) {
      this.indexKeys++;
    }
    if (key === '__proto__') {
      Object.defineProperty(target, key, { value, enumerable: true, writable: true });
    } else {
      target[key] = value;
    }
  }

  private array(
    value: readonly unknown[],
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): Normalized[] {
    const unordered = isUnorderedAt(nodes);
    const elements = new Array<Normalized>(value.length);
    const texts = unordered ? new Array<string>(value.length) : undefined;
    for (let index = 0; index < value.length; index++) {
      const element = value[index];
      const indexKeysBefore = this.indexKeys;
      this.path.push(index);
      elements[index] =
        element === undefined
          ? null
          : nodes.length === 0
            ? this.value(element, nodes, normalization, depth)
            : this.ruledValue(element, descendRules(nodes, String(index)), normalization, depth);
      this.path.pop();
      if (texts) {
        texts[index] = this.serialize(elements[index] as Normalized, indexKeysBefore);
      }
    }
    this.grow(elements.length);
    return texts ? sortedByText(elements, texts) : elements;
  }

  private set(
    value: ReadonlySet<unknown>,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): Normalized {
    const elementNodes = descendRules(nodes, WILDCARD);
    const elementNormalization = normalizationAt(elementNodes, normalization);
    const byText = new Map<string, Normalized>();
    this.path.push(WILDCARD);
    for (const element of value) {
      const indexKeysBefore = this.indexKeys;
      const normalized = this.value(element ?? null, elementNodes, elementNormalization, depth);
      byText.set(this.serialize(normalized, indexKeysBefore), normalized);
    }
    this.path.pop();
    const texts = [...byText.keys()].sort();
    return { $set: texts.map((text) => byText.get(text) as Normalized) };
  }

  private map(
    value: ReadonlyMap<unknown, unknown>,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): Normalized {
    const entries: Entry[] = [];
    for (const [key, member] of value) {
      const segment = typeof key === 'string' ? key : WILDCARD;
      this.path.push(segment);
      const indexKeysBefore = this.indexKeys;
      const normalizedKey = this.value(key ?? null, NO_RULES, normalization, depth);
      const keyText = this.serialize(normalizedKey, indexKeysBefore);
      const memberNodes = descendRules(nodes, segment);
      const normalizedMember = this.value(
        member ?? null,
        memberNodes,
        normalizationAt(memberNodes, normalization),
        depth,
      );
      entries.push({ key: keyText, value: [normalizedKey, normalizedMember] });
      this.path.pop();
    }
    entries.sort(byKey);
    for (let index = 1; index < entries.length; index++) {
      if ((entries[index] as Entry).key === (entries[index - 1] as Entry).key) {
        throw this.error('duplicate_key', 'Map keys');
      }
    }
    return { $map: entries.map((entry) => entry.value) };
  }

  private date(value: Date): string {
    if (Number.isNaN(value.getTime())) {
      throw this.error('unsupported_type', 'an invalid Date');
    }
    return this.grow(value.toISOString());
  }

  private string(value: string, normalization: StringNormalization): string {
    this.grow(value);
    const nonAscii = NON_ASCII.test(value);
    if (nonAscii && !isWellFormed(value)) {
      throw this.error('malformed_unicode');
    }
    if (normalization === 'trim') {
      const composed = nonAscii ? value.normalize('NFC') : value;
      return (composed.includes('\r') ? composed.replaceAll('\r\n', '\n') : composed).trim();
    }
    if (normalization === 'exact') {
      return value;
    }
    const normalized: unknown = normalization(value);
    if (typeof normalized !== 'string') {
      throw this.error('invalid_normalizer_result', describeValue(normalized));
    }
    if (!isWellFormed(normalized)) {
      throw this.error('malformed_unicode');
    }
    return normalized;
  }

  private dataKey(key: string): string {
    this.grow(key);
    return key.charCodeAt(0) === DOLLAR ? `$${key}` : key;
  }

  private composedKey(key: string): string {
    if (NON_ASCII.test(key) && !isWellFormed(key)) {
      throw this.error('malformed_unicode');
    }
    return this.dataKey(key.normalize('NFC'));
  }

  /** Counts text towards the size limit as it is met, so a huge input fails before it is hashed. */
  private grow<T extends string | number>(amount: T): T {
    this.size += typeof amount === 'number' ? amount : amount.length + 2;
    if (this.size > MAX_CANONICAL_INPUT_LENGTH) {
      throw this.error('too_large');
    }
    return amount;
  }

  private error(reason: KeyInputError['reason'], found?: string): KeyInputError {
    return new KeyInputError(
      reason,
      this.path.length === 0 ? '(root)' : this.path.join('.'),
      found,
    );
  }
}

/** Sorts in place by UTF-16 code units; insertion sort beats the generic sort on DTO-sized objects. */
function sortKeys(keys: string[]): void {
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

function sortedByText(values: readonly Normalized[], texts: readonly string[]): Normalized[] {
  const order = texts.map((_, index) => index);
  order.sort((a, b) => {
    const left = texts[a] as string;
    const right = texts[b] as string;
    return left < right ? -1 : left > right ? 1 : 0;
  });
  return order.map((index) => values[index] as Normalized);
}
