/**
 * `@oncely/typeorm`: durable idempotency records in the app's own relational database
 * (PostgreSQL, MySQL/MariaDB, SQLite): the entity and its migration
 * ({@link withIdempotencyRecords}), the record store ({@link TypeOrmIdempotencyRecordStore}), the
 * claims of the services sharing the database ({@link TypeOrmClaimRegistry}),
 * the operator admin ({@link TypeOrmIdempotencyRecordAdmin}), and the guards that keep a
 * transactional route's writes in its transaction.
 *
 * @packageDocumentation
 * @module @oncely/typeorm
 */

export * from './idempotency-record.entity.js';
export * from './idempotency-record.schema.js';
export * from './create-oncely-schema.migration.js';
export * from './typeorm-claim.registry.js';
export * from './claim-table-not-migrated.error.js';
export { claimTableName } from './claim-table.js';
export * from './with-idempotency-records.js';
export * from './typeorm-idempotency-record.store.js';
export * from './typeorm-idempotency-record-store.options.js';
export * from './unsupported-database.error.js';
export * from './record-table-not-migrated.error.js';
export * from './uninitialized-data-source.error.js';
export * from './write-outside-transaction.error.js';
export { guardTransactionalWrites } from './guard-transactional-writes.js';
export { activeIdempotencyManager, outsideIdempotencyTransaction } from './call-transaction.js';
export { recordTableName } from './record-table.js';
export * from './typeorm-idempotency-record.admin.js';
export { isUniqueViolation } from './record-dialect.js';
