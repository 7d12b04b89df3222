import { MAX_KEY_LENGTH } from './key.constants.js';

/**
 * The grammar of business keys, as regular expressions users can validate against:
 *
 * ```
 * key       = identity ":" fingerprint                       ; at most MAX_KEY_LENGTH chars
 * identity  = name ":" name ":" name ":" segment ":" segment ; namespace:operation:version:scope:target
 * name      = [A-Za-z0-9] [A-Za-z0-9._~-]{0,63}
 * segment   = "" | "%_" hex32 | value *("," value)          ; "" = no sources declared
 * value     = rendered | "%" tag rendered                     ; tag only in scope values
 * rendered  = "%~" hex32 | escaped                           ; escaped: 1..64 chars
 * tag       = "N" | "I" | "T"                                ; number, bigint, Date
 * escaped   = 1*( [A-Za-z0-9._~-] | "%" HEXUPPER HEXUPPER )   ; UTF-8 percent-encoding
 * fingerprint = hex{16,64}                                   ; lowercase hex, bits / 4 chars
 * ```
 *
 * Escaping only ever produces `%` followed by two upper-case hex digits, so the hash markers
 * `%~` (one value hashed) and `%_` (a whole segment hashed) and the type tags `%N`, `%I`, `%T`
 * (a scope value that is a number, bigint or Date, not a string) can never be forged by a
 * string.
 */
const NAME = '[A-Za-z0-9][A-Za-z0-9._~-]{0,63}';
const HASHED_VALUE = '%~[0-9a-f]{32}';
const ESCAPED_VALUE =
  '(?=[A-Za-z0-9._~%-]{1,64}(?![A-Za-z0-9._~%-]))(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})+';
const RENDERED_VALUE = `(?:${HASHED_VALUE}|${ESCAPED_VALUE})`;
const VALUE = `(?:%[NIT])?${RENDERED_VALUE}`;
const SEGMENT = `(?:%_[0-9a-f]{32}|${VALUE}(?:,${VALUE})*)?`;
const IDENTITY = `${NAME}:${NAME}:${NAME}:${SEGMENT}:${SEGMENT}`;

/** A `namespace`, `operation` or `version` as a spec must write it. */
export const KEY_NAME_PATTERN = new RegExp(`^${NAME}$`);

/** Every key `buildKey` returns matches this. */
export const BUSINESS_KEY_PATTERN = new RegExp(
  `^(?=.{1,${MAX_KEY_LENGTH}}$)${IDENTITY}:[0-9a-f]{16,64}$`,
);

/** Every identity (the key without its fingerprint segment) matches this. */
export const KEY_IDENTITY_PATTERN = new RegExp(`^(?=.{1,${MAX_KEY_LENGTH}}$)${IDENTITY}$`);
