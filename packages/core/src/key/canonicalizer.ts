import { types } from 'node:util';
import {
  byKey,
  isArrayIndexKey,
  putMember,
  serializeNormalized,
  sortedByText,
  sortKeys,
  type Entry,
  type Normalized,
  type NormalizedObject,
} from './canonical-json.js';
import {
  descendRules,
  isUnorderedAt,
  normalizationAt,
  WILDCARD,
  type RuleNode,
} from './canonical-rules.js';
import {
  composeKey,
  escapeKey,
  NON_ASCII,
  normalizeString,
  type CanonicalFailure,
} from './canonical-string.js';
import { ignoredPropertiesOf } from './key-ignore.decorator.js';
import { KeyInputError } from './key-input.error.js';
import { MAX_CANONICAL_INPUT_LENGTH, MAX_INPUT_DEPTH } from './key.constants.js';
import type { StringNormalization } from './key.types.js';

const NO_RULES: readonly RuleNode[] = [];

/**
 * Walks one value into plain JSON data whose objects hold their keys in sorted order (see
 * `canonicalize` for the rules), then serialises it. One instance per value: it tracks the path
 * for error messages, the objects being walked (cycles) and the text size so far.
 */
export class Canonicalizer {
  /** Objects being normalised, outermost first; short (at most MAX_INPUT_DEPTH), so an array. */
  private readonly ancestors: object[] = [];
  private readonly path: (string | number)[] = [];
  private size = 0;
  /** How many array-index keys were met so far: any forces the reference serialiser. */
  private indexKeys = 0;

  text(value: unknown, nodes: readonly RuleNode[], normalization: StringNormalization): string {
    if (value === undefined) {
      throw this.fail('unsupported_type', 'undefined');
    }
    const text = this.serialize(this.value(value, nodes, normalization, 0), 0);
    if (text.length > MAX_CANONICAL_INPUT_LENGTH) {
      throw this.fail('too_large');
    }
    return text;
  }

  /** RFC 8785 text of a normalised value built while `indexKeys` grew from `indexKeysBefore`. */
  private serialize(value: Normalized, indexKeysBefore: number): string {
    return serializeNormalized(value, this.indexKeys !== indexKeysBefore);
  }

  private value(
    value: unknown,
    nodes: readonly RuleNode[],
    normalization: StringNormalization,
    depth: number,
  ): Normalized {
    switch (typeof value) {
      case 'string':
        return normalizeString(this.grow(value), normalization, this.fail);
      case 'number':
        if (!Number.isFinite(value)) {
          throw this.fail('non_finite_number', String(value));
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
        throw this.fail('unsupported_type', `a ${typeof value}`);
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
      throw this.fail('too_deep');
    }
    if (this.ancestors.includes(value)) {
      throw this.fail('cycle');
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
      throw this.fail('unsupported_type', `a ${kind.slice(8, -1)}`);
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
        key: this.dataKey(composeKey(key, this.fail)),
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
        throw this.fail('duplicate_key', 'property names');
      }
      this.put(normalized, key, memberValue);
    }
    return normalized;
  }

  private put(target: NormalizedObject, key: string, value: Normalized): void {
    if (isArrayIndexKey(key)) {
      this.indexKeys++;
    }
    putMember(target, key, value);
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
        throw this.fail('duplicate_key', 'Map keys');
      }
    }
    return { $map: entries.map((entry) => entry.value) };
  }

  private date(value: Date): string {
    if (Number.isNaN(value.getTime())) {
      throw this.fail('unsupported_type', 'an invalid Date');
    }
    return this.grow(value.toISOString());
  }

  private dataKey(key: string): string {
    return escapeKey(this.grow(key));
  }

  /** Counts text towards the size limit as it is met, so a huge input fails before it is hashed. */
  private grow<T extends string | number>(amount: T): T {
    this.size += typeof amount === 'number' ? amount : amount.length + 2;
    if (this.size > MAX_CANONICAL_INPUT_LENGTH) {
      throw this.fail('too_large');
    }
    return amount;
  }

  /** The error for the value at the current path; an arrow so the string rules can call it. */
  private readonly fail: CanonicalFailure = (reason, found) =>
    new KeyInputError(reason, this.path.length === 0 ? '(root)' : this.path.join('.'), found);
}
