import { OncelyError } from '@oncely/core';

/** A `RedisFlightCoordinator` option that cannot work; the message says which and why. */
export class InvalidRedisOptionError extends OncelyError {
  readonly code = 'invalid_redis_option';

  constructor(
    /** The option's name, e.g. `keyPrefix`. */
    readonly option: string,
    /** Why it cannot work, and what to give instead. */
    readonly reason: string,
  ) {
    super(`Invalid @oncely/redis option "${option}": ${reason}`);
  }
}
