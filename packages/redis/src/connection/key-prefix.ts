import { InvalidRedisOptionError } from './invalid-redis-option.error.js';

/** What every adapter's keys start with unless the caller sets `keyPrefix`. */
const defaultKeyPrefix = 'oncely:';

/**
 * The `keyPrefix` option of any adapter, checked. A brace in the prefix would become the hash tag
 * of every key built on it, putting all of them in one Redis Cluster slot.
 */
export function keyPrefix(prefix: string = defaultKeyPrefix): string {
  if (/[{}]/.test(prefix)) {
    throw new InvalidRedisOptionError(
      'keyPrefix',
      `"${prefix}" contains "{" or "}", which Redis Cluster would read as the hash tag of every key, putting them all in one slot. Choose a prefix without braces.`,
    );
  }
  return prefix;
}
