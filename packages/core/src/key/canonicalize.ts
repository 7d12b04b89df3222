import {
  compileCanonicalRules,
  normalizationAt,
  rulesAtRoot,
  type RuleNode,
} from './canonical-rules.js';
import { Canonicalizer } from './canonicalizer.js';
import { KeySpecError } from './key-spec.error.js';
import type { CanonicalizeOptions, StringNormalization } from './key.types.js';

/** How strings are normalised where no rule says otherwise. */
export const DEFAULT_NORMALIZATION: StringNormalization = 'trim';

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
