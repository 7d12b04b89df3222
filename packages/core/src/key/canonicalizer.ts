import { types } from 'node:util';
import {
  arrayText,
  compareText,
  escapedContent,
  objectText,
  quotePlain,
  sortedUniquely,
  taggedText,
  type TextEntry,
} from './canonical-json.js';
import {
  descendRules,
  isUnorderedAt,
  normalizationAt,
  WILDCARD,
  type RuleNode,
} from './canonical-rules.js';
import { composeKey, escapeKey, normalizeString, plainStringContent } from './canonical-string.js';
import { CanonicalWalk } from './canonical-walk.js';
import { isoDateText } from './iso-date.js';
import { ignoredPropertiesOf } from './key-ignore.decorator.js';
import {
  knownLayouts,
  memberName,
  plainPrototypeLayouts,
  recordLayout,
  type RecordLayout,
} from './record-layout.js';
import { MAX_CANONICAL_INPUT_LENGTH } from './key.constants.js';
import type { StringNormalization } from './key.types.js';

/** The rule nodes in force at a value (see `canonical-rules.ts`). */
type Rules = readonly RuleNode[];

const NO_RULES: Rules = [];

/** Whether a class instance has no `Symbol.toStringTag` of its own making it another type. */
const isUntagged = (value: object) => Object.prototype.toString.call(value) === '[object Object]';

/**
 * Writes one value's RFC 8785 text (see `canonicalize` for the rules) in a single walk, objects
 * with their members already in sorted order, so nothing is built to be serialised afterwards.
 * One instance per value, with its `CanonicalWalk` (path, cycles, size).
 *
 * The text grows left to right one token at a time (`{"name":`, a value, `","name":"`, …). The
 * hash needs it flat, and V8 flattens a string built by `+` at a cost per piece, so pieces are
 * kept few: nested values are written in place rather than returned and joined, punctuation
 * comes with the names, and a string's closing quote is left for the next token to bring. (One
 * class, not a subclass of a writer: V8 constructs a subclass whose `name` was redefined, as
 * esbuild's `keepNames` does under tsx, on a slow path that made every key markedly slower.)
 */
export class Canonicalizer {
  private readonly walk = new CanonicalWalk();
  private out = '';
  /** The last string written still lacks its closing quote. */
  private quoteOwed = false;

  text(value: unknown, nodes: Rules, normalization: StringNormalization): string {
    if (value === undefined) {
      throw this.walk.fail('unsupported_type', 'undefined');
    }
    this.value(value, nodes, normalization, 0);
    return this.finish();
  }

  /**
   * Writes `value` standing at `path` in an object the caller writes itself (the key's canonical
   * input): errors name the whole path and nesting counts from the caller's root.
   */
  writeMember(
    value: unknown,
    path: readonly string[],
    nodes: Rules,
    normalization: StringNormalization,
  ): void {
    this.walk.path.push(...path);
    this.value(value, nodes, normalization, path.length);
    this.walk.path.length = 0;
  }

  /** Writes `token`, punctuation or a member name, after the quote a string may owe. */
  write(token: string): void {
    if (this.quoteOwed) {
      this.quoteOwed = false;
      this.out += `"${token}`;
    } else {
      this.out += token;
    }
  }

  /** The whole canonical text, unless it exceeds MAX_CANONICAL_INPUT_LENGTH. */
  finish(): string {
    this.write('');
    if (this.out.length > MAX_CANONICAL_INPUT_LENGTH) {
      throw this.walk.fail('too_large');
    }
    return this.out;
  }

  private value(
    value: unknown,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): void {
    switch (typeof value) {
      case 'string':
        this.write('"');
        this.stringContent(value, normalization);
        return;
      case 'number':
        if (!Number.isFinite(value)) {
          throw this.walk.fail('non_finite_number', String(value));
        }
        this.walk.grow(1);
        // ECMAScript's number-to-string, as RFC 8785 requires: -0 is written 0.
        this.write(String(value));
        return;
      case 'boolean':
        this.walk.grow(1);
        this.write(value ? 'true' : 'false');
        return;
      case 'bigint':
        this.write(taggedText('$bigint', quotePlain(this.walk.grow(value.toString()))));
        return;
      case 'object':
        if (value === null) {
          this.walk.grow(1);
          this.write('null');
          return;
        }
        this.object(value, nodes, normalization, depth);
        return;
      default:
        throw this.walk.fail('unsupported_type', `a ${typeof value}`);
    }
  }

  /** Writes a string's content after its opening quote, and owes the closing one. */
  private stringContent(value: string, normalization: StringNormalization): void {
    this.walk.grow(value);
    this.out +=
      plainStringContent(value, normalization) ??
      escapedContent(normalizeString(value, normalization, this.walk.failure));
    this.quoteOwed = true;
  }

  private object(
    value: object,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): void {
    this.walk.enter(value, depth);
    this.dispatch(value, nodes, normalization, depth + 1);
    this.walk.leave();
  }

  private dispatch(
    value: object,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): void {
    if (Array.isArray(value)) {
      this.array(value, nodes, normalization, depth);
      return;
    }
    const prototype = Object.getPrototypeOf(value) as object | null;
    let layouts = knownLayouts(prototype);
    if (!layouts || (prototype !== Object.prototype && prototype !== null && !isUntagged(value))) {
      if (types.isDate(value)) {
        this.date(value);
        return;
      }
      if (types.isUint8Array(value)) {
        const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        this.write(taggedText('$bytes', quotePlain(this.walk.grow(bytes.toString('base64')))));
        return;
      }
      if (types.isMap(value)) {
        this.map(value, nodes, normalization, depth);
        return;
      }
      if (types.isSet(value)) {
        this.set(value, nodes, normalization, depth);
        return;
      }
      const kind = Object.prototype.toString.call(value);
      if (kind !== '[object Object]') {
        throw this.walk.fail('unsupported_type', `a ${kind.slice(8, -1)}`);
      }
      // Not null (knownLayouts covers it); its next instances skip the type checks above.
      layouts ??= plainPrototypeLayouts(prototype as object);
    }
    const record = value as Record<string, unknown>;
    this.record(record, nodes, normalization, depth, prototype, layouts);
  }

  private record(
    value: Record<string, unknown>,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
    prototype: object | null,
    layouts: RecordLayout[],
  ): void {
    const ignored = ignoredPropertiesOf(prototype);
    const keys = Object.keys(value);
    const layout = recordLayout(layouts, keys, ignored);
    if (!layout) {
      this.composedRecord(value, keys, ignored, nodes, normalization, depth);
      return;
    }
    // Read in one pass rather than by name: a lookup by a different name at each step is slow.
    // A getter that deletes a later property shortens the list: then read by name after all.
    let values = Object.values(value);
    if (values.length !== keys.length) {
      values = keys.map((key) => value[key]);
    }
    let written = 0;
    let namesLength = 0;
    for (const member of layout.members) {
      const memberValue = values[member.index];
      if (memberValue === undefined) {
        continue;
      }
      const memberNodes = nodes.length === 0 ? nodes : descendRules(nodes, member.key);
      const memberNormalization =
        nodes.length === 0 ? normalization : normalizationAt(memberNodes, normalization);
      const isString = typeof memberValue === 'string';
      const name = memberName(member, written === 0, this.quoteOwed, isString);
      this.quoteOwed = false;
      this.out += name;
      namesLength += name.length;
      written++;
      this.walk.path.push(member.key);
      if (isString) {
        this.stringContent(memberValue, memberNormalization);
      } else {
        this.value(memberValue, memberNodes, memberNormalization, depth);
      }
      this.walk.path.pop();
    }
    this.walk.grow(namesLength);
    this.write(written === 0 ? '{}' : '}');
  }

  /** `record` for objects with keys that need NFC (which may reorder or merge them) or escaping. */
  private composedRecord(
    value: Record<string, unknown>,
    keys: readonly string[],
    ignored: ReadonlySet<string>,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): void {
    const entries: TextEntry[] = [];
    for (const key of keys) {
      const member = value[key];
      if (member === undefined || ignored.has(key)) {
        continue;
      }
      this.walk.path.push(key);
      const memberNodes = descendRules(nodes, key);
      entries.push({
        key: escapeKey(this.walk.grow(composeKey(key, this.walk.failure))),
        text: this.textOf(member, memberNodes, normalizationAt(memberNodes, normalization), depth),
      });
      this.walk.path.pop();
    }
    const duplicate = sortedUniquely(entries);
    if (duplicate !== undefined) {
      this.walk.path.push(duplicate);
      throw this.walk.fail('duplicate_key', 'property names');
    }
    this.write(objectText(entries));
  }

  private array(
    value: readonly unknown[],
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): void {
    const unordered = isUnorderedAt(nodes);
    const texts: string[] = [];
    for (let index = 0; index < value.length; index++) {
      const element = value[index] ?? null;
      const elementNodes = nodes.length === 0 ? nodes : descendRules(nodes, String(index));
      const elementNormalization =
        nodes.length === 0 ? normalization : normalizationAt(elementNodes, normalization);
      this.walk.path.push(index);
      if (unordered) {
        texts.push(this.textOf(element, elementNodes, elementNormalization, depth));
      } else if (typeof element === 'string') {
        this.write(index === 0 ? '["' : ',"');
        this.stringContent(element, elementNormalization);
      } else {
        this.write(index === 0 ? '[' : ',');
        this.value(element, elementNodes, elementNormalization, depth);
      }
      this.walk.path.pop();
    }
    this.walk.grow(value.length);
    if (unordered) {
      this.write(arrayText(texts.sort(compareText)));
    } else {
      this.write(value.length === 0 ? '[]' : ']');
    }
  }

  private set(
    value: ReadonlySet<unknown>,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): void {
    const elementNodes = descendRules(nodes, WILDCARD);
    const elementNormalization = normalizationAt(elementNodes, normalization);
    const texts = new Set<string>();
    this.walk.path.push(WILDCARD);
    for (const element of value) {
      texts.add(this.textOf(element ?? null, elementNodes, elementNormalization, depth));
    }
    this.walk.path.pop();
    this.write(taggedText('$set', arrayText([...texts].sort(compareText))));
  }

  private map(
    value: ReadonlyMap<unknown, unknown>,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): void {
    const entries: TextEntry[] = [];
    for (const [key, member] of value) {
      const segment = typeof key === 'string' ? key : WILDCARD;
      this.walk.path.push(segment);
      const keyText = this.textOf(key ?? null, NO_RULES, normalization, depth);
      const memberNodes = descendRules(nodes, segment);
      const memberNormalization = normalizationAt(memberNodes, normalization);
      const memberText = this.textOf(member ?? null, memberNodes, memberNormalization, depth);
      entries.push({ key: keyText, text: `[${keyText},${memberText}]` });
      this.walk.path.pop();
    }
    if (sortedUniquely(entries) !== undefined) {
      throw this.walk.fail('duplicate_key', 'Map keys');
    }
    this.write(taggedText('$map', arrayText(entries.map((entry) => entry.text))));
  }

  /** The text of one value on its own, for containers that sort their members by it. */
  private textOf(
    value: unknown,
    nodes: Rules,
    normalization: StringNormalization,
    depth: number,
  ): string {
    const { out, quoteOwed } = this;
    this.out = '';
    this.quoteOwed = false;
    this.value(value, nodes, normalization, depth);
    this.write('');
    const text = this.out;
    this.out = out;
    this.quoteOwed = quoteOwed;
    return text;
  }

  private date(value: Date): void {
    if (Number.isNaN(value.getTime())) {
      throw this.walk.fail('unsupported_type', 'an invalid Date');
    }
    this.write('"');
    this.out += this.walk.grow(isoDateText(value));
    this.quoteOwed = true;
  }
}
