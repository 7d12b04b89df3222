import { OncelyError } from '@oncely/core';

/** A `RedisFlightCoordinator` option that cannot work; the message says which and why. */
export class InvalidRedisOptionError extends OncelyError {
  readonly code = 'invalid_redis_option';

  constructor(
    readonly option: string,
    readonly reason: string,
  ) {
    super(`Invalid @oncely/redis option "${option}": ${reason}`);
  }
}
