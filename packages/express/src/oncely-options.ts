import {
  OncelyConfigurationError,
  type FlightCoordinator,
  type IdempotencyRecordStore,
} from '@oncely/core';

/** Checks of the options only `createOncely()` has; the shared ones live in core. */

export function checkCoordinator(value: unknown): FlightCoordinator | undefined {
  if (value === undefined) return undefined;
  if (!hasMethods(value, 'acquire', 'waitForNotice')) {
    throw new OncelyConfigurationError(
      'createOncely() option "coordinator" must be a FlightCoordinator, e.g. new RedisFlightCoordinator(redis) from @oncely/redis, or left out for the in-memory one.',
    );
  }
  return value as FlightCoordinator;
}

export function checkStore(value: unknown): IdempotencyRecordStore | undefined {
  if (value === undefined) return undefined;
  if (!hasMethods(value, 'begin', 'complete')) {
    throw new OncelyConfigurationError(
      'createOncely() option "store" must be an IdempotencyRecordStore, e.g. new TypeOrmIdempotencyRecordStore(dataSource) from @oncely/typeorm, or left out for the in-memory one.',
    );
  }
  return value as IdempotencyRecordStore;
}

export function checkResolveUser(value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new OncelyConfigurationError(
      'createOncely() option "resolveUser" must be a function (req) => principal.',
    );
  }
}

function hasMethods(value: unknown, ...names: string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return names.every((name) => typeof candidate[name] === 'function');
}
