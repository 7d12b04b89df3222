/** Rule/schema version used when a spec names none. Bump it to stop old results matching. */
export const DEFAULT_KEY_VERSION = 'v1';

/** Fingerprint length when a spec names none: 128 bits, 32 hex characters. */
export const DEFAULT_FINGERPRINT_BITS = 128;
export const MIN_FINGERPRINT_BITS = 64;
export const MAX_FINGERPRINT_BITS = 256;

/** Longest `namespace`, `operation` or `version` a spec may declare. */
export const MAX_KEY_NAME_LENGTH = 64;

/**
 * Longest scope or target value kept readable in a key, counted after escaping. A longer value is
 * replaced by `%~` and the first 32 hex characters of the SHA-256 of its normalised text.
 */
export const MAX_SEGMENT_VALUE_LENGTH = 64;

/**
 * Upper bound of every key `buildKey` returns. When scope and target together would push a key
 * past it, the longer of the two segments (then the other) is replaced by `%_` and 32 hex
 * characters of its hash. With names of at most 64 characters and a fingerprint of at most 64,
 * a key then never exceeds 3 * 64 + 2 * 34 + 64 + 5 = 329 characters, so this bound always holds
 * and never raises.
 */
export const MAX_KEY_LENGTH = 512;

/** Deepest nesting of objects, arrays, maps and sets accepted in key input. */
export const MAX_INPUT_DEPTH = 64;

/** Longest canonical input accepted, in UTF-16 code units (about 1 MiB of JSON). */
export const MAX_CANONICAL_INPUT_LENGTH = 1_048_576;
