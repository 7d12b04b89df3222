import type { KeyInputError, KeyInputErrorReason } from './key-input.error.js';
import type { StringNormalization } from './key.types.js';
import { describeValue, isWellFormed } from './text.js';

/** Builds the `KeyInputError` for the value being canonicalised, naming where it stands. */
export type CanonicalFailure = (reason: KeyInputErrorReason, found?: string) => KeyInputError;

/** Any code unit outside ASCII: only such strings can need NFC or hold a lone surrogate. */
export const NON_ASCII = /[\u0080-\uffff]/;
/** Tags start with one `$`; a data key starting with `$` gets a second one, so none can forge a tag. */
const DOLLAR = 0x24;

/**
 * A string value under its field's normalisation: `'trim'` composes to NFC, turns CRLF into LF
 * and trims; `'exact'` keeps it; a function's result must be a well-formed string.
 */
export function normalizeString(
  value: string,
  normalization: StringNormalization,
  fail: CanonicalFailure,
): string {
  const nonAscii = NON_ASCII.test(value);
  if (nonAscii && !isWellFormed(value)) {
    throw fail('malformed_unicode');
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
