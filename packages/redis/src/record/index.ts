export * from './redis-idempotency-record.store.js';
export * from './redis-idempotency-record-store.options.js';
