export * from './redis-record.quota.js';
export * from './redis-idempotency-record.admin.js';
