import { UsageError } from '../cli/cli-command.js';
import type { OperatorCommandLine } from './operator-command-line.js';

/**
 * Where the app's coordinator keeps its leases and cached replays, as far as the command line
 * tells: `redis`, the Redis given (or, with `--redis` alone, the one holding the records too);
 * `in-process`, the operator said the app has no Redis coordinator (`--no-redis`), so its
 * leases and cached replays live in the app's own memory, out of this command's reach.
 */
export type CoordinatorReach = 'redis' | 'in-process';

/** `--no-redis` as a `parseArgs` option of `purge` and `release`. */
export const NO_REDIS_OPTION = { 'no-redis': { type: 'boolean' } } as const;

/** The usage lines of `--no-redis`. */
export const NO_REDIS_USAGE = `  --no-redis          with --database: the app has no Redis coordinator (its coordinator is
                      in-process, out of reach here); needed to run with --database alone`;

/**
 * Where the app's coordinator is, or a `UsageError` when the command line cannot tell: with
 * `--database` alone the idempotency guard may cache the replay (and hold the lease) in a Redis
 * coordinator the command was not given, and freeing only the record would leave that layer
 * answering. The operator names the Redis, or says there is none; contradictions are refused.
 */
export function coordinatorReachOf(
  command: OperatorCommandLine,
  usage: string,
  frees: string,
): CoordinatorReach {
  const { redis } = command.connection;
  if (command.flags['no-redis']) {
    if (redis.length > 0) {
      throw new UsageError(
        'Give either --redis (or ONCELY_REDIS_URL) or --no-redis, not both: --no-redis says the app has no Redis coordinator.',
        usage,
      );
    }
    return 'in-process';
  }
  if (redis.length > 0) return 'redis';
  throw new UsageError(
    `Refused: with --database alone the app's coordinator is unknown, and a Redis coordinator would keep ${frees} for the next request. Add --redis <url> of the app's coordinator to free it too, or --no-redis if the app has no Redis coordinator.`,
    usage,
  );
}
