import { parseItem } from 'structured-headers';

/** The header clients send, as the IETF draft names it; routes may configure another name. */
export const DEFAULT_IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export type IdempotencyKeyHeader =
  | { readonly kind: 'absent' }
  | { readonly kind: 'valid'; readonly value: string }
  | { readonly kind: 'malformed'; readonly reason: string };

// RFC 9110 token characters. A bare token is accepted besides the sf-string the draft specifies,
// because most clients send an unquoted UUID (which is not an sf-token: it may start with a digit).
const BARE_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * Reads an `Idempotency-Key` header value as the IETF draft defines it (a structured-field
 * string), or as a bare token. The key must be 1–255 printable ASCII characters. A header sent
 * more than once (an array, or values Node joined with a comma) is malformed.
 */
export function parseIdempotencyKeyHeader(
  raw: string | readonly string[] | undefined,
): IdempotencyKeyHeader {
  if (raw === undefined) return { kind: 'absent' };
  if (typeof raw !== 'string') {
    return raw.length === 0
      ? { kind: 'absent' }
      : { kind: 'malformed', reason: 'the header was sent more than once' };
  }
  const text = raw.trim();
  if (text === '') return { kind: 'malformed', reason: 'the header is empty' };
  const value = text.startsWith('"') ? parseStructuredString(text) : parseBareToken(text);
  if (typeof value !== 'string') return value;
  if (value.length === 0) return { kind: 'malformed', reason: 'the key is empty' };
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return {
      kind: 'malformed',
      reason: `the key is ${value.length} characters long; at most ${MAX_IDEMPOTENCY_KEY_LENGTH} are allowed`,
    };
  }
  if (!PRINTABLE_ASCII.test(value)) {
    return { kind: 'malformed', reason: 'the key must contain printable ASCII characters only' };
  }
  // Key segments are trimmed, so " a" would silently share a record with "a": refuse it instead.
  if (value.trim() !== value) {
    return { kind: 'malformed', reason: 'the key must not begin or end with a space' };
  }
  return { kind: 'valid', value };
}

function parseStructuredString(text: string): string | IdempotencyKeyHeader {
  try {
    const [value, parameters] = parseItem(text);
    if (typeof value !== 'string' || parameters.size > 0) {
      return { kind: 'malformed', reason: 'expected a single structured-field string' };
    }
    return value;
  } catch {
    return { kind: 'malformed', reason: 'the quoted value is not a valid structured-field string' };
  }
}

function parseBareToken(text: string): string | IdempotencyKeyHeader {
  return BARE_TOKEN.test(text)
    ? text
    : {
        kind: 'malformed',
        reason: 'expected a structured-field string ("...") or a token (letters, digits, -._~ …)',
      };
}
