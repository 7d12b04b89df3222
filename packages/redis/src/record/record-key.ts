import { recordKeyHash } from '@oncely/core/adapter';
import { InvalidRedisOptionError } from '../connection/invalid-redis-option.error.js';
import { keyPrefix } from '../connection/key-prefix.js';

/**
 * Record keys carry the identity's `namespace:operation:version` so that an operator can
 * `SCAN MATCH` one operation's records on every master (`recordKeyPattern`), and the record key
 * hash as their Redis Cluster hash tag, so a record sits in the slot of its identity.
 *
 *   `<prefix><namespace>:<operation>:<version>:{<keyHash>}:record`
 *
 * Identities built by `buildKey` have names of `[A-Za-z0-9._~-]` only, which stay as they are. An
 * identity written by hand may hold anything: each of its first three `:`-separated parts
 * (missing ones are empty) is percent-encoded outside that alphabet, `%` included, so a part can
 * never hold a `:` (it would shift the operation), a brace (it would move the hash tag) or a glob
 * character (it would widen a pattern), and the encoding stays one-to-one. The key hash alone
 * tells identities apart; the readable part only sorts them by operation.
 */
const recordSuffix = ':record';

/** Outside the unreserved alphabet of key names, `%` included. */
const unsafeInName = /[^A-Za-z0-9._~-]/gu;
/** The characters `SCAN MATCH` reads as glob syntax, escaped with a backslash. */
const globSyntax = /[*?[\]\\]/g;

/** The record keys of one key prefix, built once per store or admin. */
export interface RecordKeys {
  /** The key of `identity`'s record. */
  readonly of: (identity: string) => string;
  /** The `SCAN MATCH` glob of one operation's records; see `recordKeyPattern`. */
  readonly pattern: (operation: string) => string;
}

/** The record keys under `prefix` (checked: no braces; default `oncely:`). */
export function recordKeys(prefix?: string): RecordKeys {
  const checked = keyPrefix(prefix);
  return {
    of: (identity) => recordKeyOf(checked, identity),
    pattern: (operation) => recordPatternOf(checked, operation),
  };
}

/**
 * The Redis key of the idempotency record of `identity` under `prefix` (the store's
 * `keyPrefix`, default `oncely:`): `<prefix><namespace>:<operation>:<version>:{<keyHash>}:record`,
 * where the key hash is `recordKeyHash(identity)` and the cluster hash tag.
 *
 * @throws InvalidRedisOptionError when `prefix` contains a brace.
 */
export function recordKey(prefix: string | undefined, identity: string): string {
  return recordKeyOf(keyPrefix(prefix), identity);
}

/**
 * The `SCAN … MATCH` glob of the record keys of one operation under `prefix`: `operation` is
 * `namespace:operation:version` for one version, or `namespace:operation` for all of them. The
 * prefix's glob characters (`*?[]\`) are escaped; the names are encoded as in `recordKey`.
 *
 * @throws InvalidRedisOptionError when `prefix` contains a brace, or `operation` does not have
 *   two or three `:`-separated parts.
 */
export function recordKeyPattern(prefix: string | undefined, operation: string): string {
  return recordPatternOf(keyPrefix(prefix), operation);
}

/** The record key hash of a record key (what `SCAN` returned), or `undefined` for another key. */
export function recordKeyHashOf(key: string): string | undefined {
  if (!key.endsWith(`}${recordSuffix}`)) return undefined;
  const open = key.lastIndexOf('{');
  const hash = key.slice(open + 1, key.length - recordSuffix.length - 1);
  return open >= 0 && /^[0-9a-f]{64}$/.test(hash) ? hash : undefined;
}

function recordKeyOf(prefix: string, identity: string): string {
  const first = identity.indexOf(':');
  const second = first < 0 ? -1 : identity.indexOf(':', first + 1);
  const third = second < 0 ? -1 : identity.indexOf(':', second + 1);
  const operation =
    third >= 0
      ? identity.slice(0, third)
      : second >= 0
        ? identity
        : first >= 0
          ? `${identity}:`
          : `${identity}::`;
  return `${prefix}${encodedOperation(operation)}:{${recordKeyHash(identity)}}${recordSuffix}`;
}

function recordPatternOf(prefix: string, operation: string): string {
  const parts = operation.split(':');
  if (parts.length < 2 || parts.length > 3) {
    throw new InvalidRedisOptionError(
      'operation',
      `"${operation}" is neither "namespace:operation:version" nor "namespace:operation" (every version). Name the operation as its key spec does.`,
    );
  }
  const names = parts.map(encodedName).join(':');
  const versions = parts.length === 2 ? ':*' : '';
  return `${prefix.replace(globSyntax, '\\$&')}${names}${versions}:{*}${recordSuffix}`;
}

/** `namespace:operation:version`, each part encoded; the fast path is the usual identity's. */
function encodedOperation(operation: string): string {
  if (!/[^A-Za-z0-9._~:-]/.test(operation)) return operation;
  return operation.split(':').map(encodedName).join(':');
}

function encodedName(name: string): string {
  return name.replace(unsafeInName, (char) =>
    [...Buffer.from(char, 'utf8')]
      .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  );
}
