import { types } from 'node:util';
import { KeyInputError } from './key-input.error.js';
import { MAX_SEGMENT_VALUE_LENGTH } from './key.constants.js';
import { sha256Hex } from './sha256.js';
import { describeValue, isWellFormed } from './text.js';

const NON_ASCII = /[\u0080-\uffff]/;
const UNRESERVED_ONLY = /^[A-Za-z0-9._~-]*$/;
/** Characters `encodeURIComponent` leaves alone but the key alphabet does not admit. */
const SUB_DELIMS = /[!'()*]/g;

/** Prefix of one value replaced by its hash; `%` + non-hex can never come out of escaping. */
const HASHED_VALUE_MARKER = '%~';
/** Prefix of a whole scope or target segment replaced by its hash (key length bound). */
const HASHED_SEGMENT_MARKER = '%_';
/** Hex characters kept from a SHA-256 in a hashed value or segment: 128 bits. */
const MARKER_HASH_LENGTH = 32;

/**
 * The text a scope or target value stands for, or `undefined` if it is missing (`undefined`,
 * `null`, or a string that is empty once trimmed). Strings get NFC, CRLF to LF and trimming;
 * numbers, bigints and booleans their JavaScript text (`-0` reads `0`); Dates their ISO-8601 UTC
 * form. Identifiers are compared as text, so `1001` and `'1001'` are the same value here (route
 * params always arrive as strings).
 */
export function segmentText(value: unknown, field: string): string | undefined {
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string': {
      let text = value;
      if (NON_ASCII.test(text)) {
        if (!isWellFormed(text)) {
          throw new KeyInputError('malformed_unicode', field);
        }
        text = text.normalize('NFC');
      }
      if (text.includes('\r')) {
        text = text.replaceAll('\r\n', '\n');
      }
      text = text.trim();
      return text === '' ? undefined : text;
    }
    case 'number':
      if (!Number.isFinite(value)) {
        throw new KeyInputError('non_finite_number', field, String(value));
      }
      return String(value);
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      if (value === null) {
        return undefined;
      }
      if (types.isDate(value)) {
        const time = value.getTime();
        if (Number.isNaN(time)) {
          throw new KeyInputError('invalid_segment_value', field, 'an invalid Date');
        }
        return value.toISOString();
      }
      throw new KeyInputError('invalid_segment_value', field, describeValue(value));
  }
}

/** Percent-encodes (UTF-8, upper-case hex) everything outside `[A-Za-z0-9._~-]`. */
export function escapeSegmentValue(text: string): string {
  if (UNRESERVED_ONLY.test(text)) {
    return text;
  }
  return encodeURIComponent(text).replace(
    SUB_DELIMS,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** The escaped value, or `%~` + 32 hex of its SHA-256 when escaping makes it longer than 64. */
export function renderSegmentValue(text: string): string {
  const escaped = escapeSegmentValue(text);
  return escaped.length > MAX_SEGMENT_VALUE_LENGTH
    ? HASHED_VALUE_MARKER + sha256Hex(text).slice(0, MARKER_HASH_LENGTH)
    : escaped;
}

/** A whole rendered segment replaced by `%_` + 32 hex of its SHA-256. */
export function hashSegment(segment: string): string {
  return HASHED_SEGMENT_MARKER + sha256Hex(segment).slice(0, MARKER_HASH_LENGTH);
}
