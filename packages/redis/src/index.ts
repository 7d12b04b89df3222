/**
 * `@oncely/redis`: oncely's adapters for Redis (standalone or Cluster) on ioredis. Every export
 * below is documented at its declaration.
 *
 * @packageDocumentation
 * @module @oncely/redis
 */

/** The SingleFlight coordinator on Redis leases, with completion notices over pub/sub. */
export { RedisFlightCoordinator } from './flight/redis-flight.coordinator.js';
/** Options of `RedisFlightCoordinator`: key prefix, command timeout and near cache. */
export type { RedisFlightCoordinatorOptions } from './flight/redis-flight-coordinator.options.js';
/** The bounds of the near caches of the store and the coordinator: entries and bytes. */
export type { RedisNearCacheOptions } from './connection/near-cache-bounds.js';
/** What `RedisFlightCoordinator.inspectFlight` reports for one business key (the core port's type). */
export type { FlightInspection } from '@oncely/core';

/** Durable idempotency records in Redis, one string per identity changed only by Lua scripts. */
export { RedisIdempotencyRecordStore } from './record/redis-idempotency-record.store.js';
/** Options of `RedisIdempotencyRecordStore`: key prefix, near cache. */
export type { RedisIdempotencyRecordStoreOptions } from './record/redis-idempotency-record-store.options.js';
/** What `RedisIdempotencyRecordStore.nearCacheStats` reports. */
export type { NearCacheStats } from './record/record-near-cache.js';

/** Where a record lives: its key, one operation's `SCAN MATCH` glob, a scanned key's hash. */
export { recordKey, recordKeyHashOf, recordKeyPattern } from './record/record-key.js';

/** Claims of the services sharing one Redis: where the coordinator and the store register them. */
export {
  RedisClaimRegistry,
  type RedisClaimEntry,
  type RedisClaimRegistryOptions,
} from './claims/redis-claim.registry.js';

/** Operator access (inspect, force release) to the records of `RedisIdempotencyRecordStore`. */
export {
  RedisIdempotencyRecordAdmin,
  type RedisIdempotencyRecordAdminOptions,
} from './security/redis-idempotency-record.admin.js';
/** One live record as `RedisIdempotencyRecordAdmin.listRecords` reports it (the core port's type). */
export type { RecordSummary } from '@oncely/core';
/** Fixed-window record quotas shared by every process through Redis counters. */
export { RedisRecordQuota, type RedisRecordQuotaOptions } from './security/redis-record.quota.js';

/** What the adapters connect to: a client you own, or options for one they create and close. */
export type { RedisClusterConnection, RedisConnection } from './connection/redis-connection.js';
/** An adapter option that cannot work (`code` `invalid_redis_option`); names the option. */
export { InvalidRedisOptionError } from './connection/invalid-redis-option.error.js';
