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

/** Prefixes of typed scope values; `%` + a letter outside A-F can never come out of escaping. */
const NUMBER_TAG = '%N';
const BIGINT_TAG = '%I';
const DATE_TAG = '%T';

/**
 * The rendered key value of one scope value, or `undefined` if it is missing (`undefined`,
 * `null`, or a string that is empty or only whitespace).
 *
 * Scope values are identities (tenant, user, account), so they are compared exactly and by type:
 * a string is kept as received (no trimming, no Unicode normalisation, so `"acme "`, `"acme"`
 * and the NFD spelling of a name are three scopes), and a number, bigint or Date is tagged
 * (`%N7`, `%I7`, `%T…`) so it never meets the string with the same text. A string is rendered
 * exactly as before tagging existed, so keys of stored records stay reachable. Booleans are
 * refused: a flag is never the identity of a principal, and `false` standing for a tenant
 * merges every principal whose lookup failed.
 *
 * @throws KeyInputError for a boolean, a non-finite number, malformed Unicode or a non-scalar.
 */
export function renderScopeValue(value: unknown, field: string): string | undefined {
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string':
      if (isOwnRendering(value)) {
        return value;
      }
      if (value.trim() === '') {
        return undefined;
      }
      if (NON_ASCII.test(value) && !isWellFormed(value)) {
        throw new KeyInputError('malformed_unicode', field);
      }
      return renderSegmentValue(value);
    case 'number':
      return NUMBER_TAG + renderSegmentValue(finiteNumberText(value, field));
    case 'bigint':
      return BIGINT_TAG + renderSegmentValue(String(value));
    case 'boolean':
      throw new KeyInputError('boolean_scope_value', field);
    default:
      if (value === null) {
        return undefined;
      }
      return DATE_TAG + renderSegmentValue(dateText(value, field));
  }
}

/**
 * The rendered key value of one target value, or `undefined` if it is missing; see
 * `segmentText` for the normalisation a target gets.
 */
export function renderTargetValue(value: unknown, field: string): string | undefined {
  if (typeof value === 'string' && isOwnRendering(value)) {
    return value;
  }
  const text = segmentText(value, field);
  return text === undefined ? undefined : renderSegmentValue(text);
}

/**
 * The text a target value stands for, or `undefined` if it is missing (`undefined`, `null`, or
 * a string that is empty once trimmed). Strings get NFC, CRLF to LF and trimming; numbers,
 * bigints and booleans their JavaScript text (`-0` reads `0`); Dates their ISO-8601 UTC form.
 * Targets are compared as text, so `1001` and `'1001'` are the same value here (route params
 * always arrive as strings). Scope values are stricter: `renderScopeValue`.
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
      return finiteNumberText(value, field);
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      if (value === null) {
        return undefined;
      }
      return dateText(value, field);
  }
}

function finiteNumberText(value: number, field: string): string {
  if (!Number.isFinite(value)) {
    throw new KeyInputError('non_finite_number', field, String(value));
  }
  return String(value);
}

/** The ISO-8601 UTC text of a valid Date; anything else is not a segment value. */
function dateText(value: unknown, field: string): string {
  if (!types.isDate(value)) {
    throw new KeyInputError('invalid_segment_value', field, describeValue(value));
  }
  const time = value.getTime();
  if (Number.isNaN(time)) {
    throw new KeyInputError('invalid_segment_value', field, 'an invalid Date');
  }
  return value.toISOString();
}

/**
 * Whether a string is its own rendered value, as ids usually are: 1 to 64 unreserved characters
 * leave nothing to trim, compose, escape or hash.
 */
function isOwnRendering(value: string): boolean {
  return (
    value.length !== 0 && value.length <= MAX_SEGMENT_VALUE_LENGTH && UNRESERVED_ONLY.test(value)
  );
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
