import { NEEDS_CARE } from './canonical-json.js';
import type { KeyInputError, KeyInputErrorReason } from './key-input.error.js';
import type { StringNormalization } from './key.types.js';
import { describeValue, isWellFormed } from './text.js';

/** Builds the `KeyInputError` for the value being canonicalised, naming where it stands. */
export type CanonicalFailure = (reason: KeyInputErrorReason, found?: string) => KeyInputError;

/** Any code unit outside ASCII (object keys: see `composeKey`). */
const NON_ASCII = /[\u0080-\uffff]/;
/**
 * Any code unit beyond Latin-1: only such strings can need NFC or hold a lone surrogate. No
 * Latin-1 character decomposes or composes with a neighbour, so text such as `Bâtiment` is
 * already NFC and skips `normalize`, which costs more than the rest of a short string's work.
 */
const BEYOND_LATIN1 = /[\u0100-\uffff]/;
/** Tags start with one `$`; a data key starting with `$` gets a second one, so none can forge a tag. */
const DOLLAR = 0x24;

const SPACE = 0x20;
const NO_BREAK_SPACE = 0xa0;
const isSpace = (code: number) => code === SPACE || code === NO_BREAK_SPACE;

/**
 * The JSON content (no quotes) of a string with none of the characters `NEEDS_CARE` finds, under
 * `'trim'` or `'exact'`: it needs no NFC, no CRLF rule and no escaping, and its only white space
 * can be U+0020 and U+00A0, so two reads tell whether to trim (most values need not).
 * `undefined` for any other string or normalisation: `normalizeString` then.
 */
export function plainStringContent(
  value: string,
  normalization: StringNormalization,
): string | undefined {
  if (typeof normalization !== 'string' || NEEDS_CARE.test(value)) {
    return undefined;
  }
  const trim =
    normalization === 'trim' &&
    value.length !== 0 &&
    (isSpace(value.charCodeAt(0)) || isSpace(value.charCodeAt(value.length - 1)));
  return trim ? value.trim() : value;
}

/**
 * A string value under its field's normalisation: `'trim'` composes to NFC, turns CRLF into LF
 * and trims; `'exact'` keeps it; a function's result must be a well-formed string.
 */
export function normalizeString(
  value: string,
  normalization: StringNormalization,
  fail: CanonicalFailure,
): string {
  const beyondLatin1 = BEYOND_LATIN1.test(value);
  if (beyondLatin1 && !isWellFormed(value)) {
    throw fail('malformed_unicode');
  }
  if (normalization === 'trim') {
    const composed = beyondLatin1 ? value.normalize('NFC') : value;
    return (composed.includes('\r') ? composed.replaceAll('\r\n', '\n') : composed).trim();
  }
  if (normalization === 'exact') {
    return value;
  }
  const normalized: unknown = normalization(value);
  if (typeof normalized !== 'string') {
    throw fail('invalid_normalizer_result', describeValue(normalized));
  }
  if (!isWellFormed(normalized)) {
    throw fail('malformed_unicode');
  }
  return normalized;
}

/** An object key as canonical text writes it: a leading `$` doubled (see `DOLLAR`). */
export function escapeKey(key: string): string {
  return key.charCodeAt(0) === DOLLAR ? `$${key}` : key;
}

/** A non-ASCII object key in NFC, once it is known to be well formed. */
export function composeKey(key: string, fail: CanonicalFailure): string {
  if (NON_ASCII.test(key) && !isWellFormed(key)) {
    throw fail('malformed_unicode');
  }
  return key.normalize('NFC');
}
