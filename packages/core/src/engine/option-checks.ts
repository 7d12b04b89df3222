import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import { describeOptionValue } from '../errors/describe-option-value.js';
import type { FlightCoordinator } from '../flight/flight-coordinator.port.js';
import type { IdempotencyRecordStore } from '../record/idempotency-record-store.port.js';

/**
 * Checks of single options, shared by the engine and the frameworks' own options (Nest's
 * `keyContext`, Express's `resolveUser`), so every entry point words its refusals alike. `owner`
 * names the entry point, e.g. `OncelyModule` or `createOncely()`.
 */

/**
 * Refuses an option `known` does not list, naming it and, when it looks like a misspelling of one
 * that is listed, that one: an option nobody reads would leave its default silently in force.
 */
export function refuseUnknownOptions(
  owner: string,
  options: object,
  known: ReadonlySet<string>,
): void {
  for (const name of Object.keys(options)) {
    if (known.has(name)) continue;
    const meant = [...known].find((candidate) => isMisspelling(name, candidate));
    throw new OncelyConfigurationError(
      `${owner} has no option "${name}"${meant ? `: did you mean "${meant}"?` : '.'} Its options are ${[...known].join(', ')}.`,
    );
  }
}

/** At most two edits apart (Levenshtein), case aside: `servce` for `service`, `Namespace`. */
function isMisspelling(given: string, known: string): boolean {
  const a = given.toLowerCase();
  const b = known.toLowerCase();
  if (Math.abs(a.length - b.length) > 2) return false;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length]! <= 2;
}

/** Refuses `value` unless it is a function (or left out); `shape` shows the expected signature. */
export function requireFunction(owner: string, name: string, value: unknown, shape: string): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new OncelyConfigurationError(
      `${owner} option "${name}" must be a function ${shape}, got ${describeOptionValue(value)}.`,
    );
  }
}

/** `value`, or `fallback` when it is left out; refused unless it is a positive integer. */
export function positiveIntegerOption(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new OncelyConfigurationError(
      `${owner} option "${name}" must be a positive integer (default ${fallback}), got ${describeOptionValue(value)}.`,
    );
  }
  return value;
}

/** The `coordinator` option: an instance, or `undefined` for the in-memory default. */
export function coordinatorOption(owner: string, value: unknown): FlightCoordinator | undefined {
  if (value === undefined || hasMethods(value, 'acquire', 'waitForNotice', 'close')) {
    return value as FlightCoordinator | undefined;
  }
  throw new OncelyConfigurationError(
    `${owner} option "coordinator" must be a FlightCoordinator instance, e.g. new RedisFlightCoordinator(redis) from @oncely/redis, or left out for the in-memory one. A Redis client or { redis } is not one: wrap it in new RedisFlightCoordinator(...).`,
  );
}

/** The `store` option: an instance, or `undefined` for the in-memory default. */
export function storeOption(owner: string, value: unknown): IdempotencyRecordStore | undefined {
  if (value === undefined || hasMethods(value, 'begin', 'complete', 'release', 'renew')) {
    return value as IdempotencyRecordStore | undefined;
  }
  throw new OncelyConfigurationError(
    `${owner} option "store" must be an IdempotencyRecordStore instance, e.g. new TypeOrmIdempotencyRecordStore(dataSource) from @oncely/typeorm or new RedisIdempotencyRecordStore(redis) from @oncely/redis, or left out for the in-memory one. A DataSource or a Redis client is not one: wrap it.`,
  );
}

function hasMethods(value: unknown, ...names: string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return names.every((name) => typeof candidate[name] === 'function');
}
