export * from './stored-response.js';
export * from './idempotency-record-store.port.js';
export * from './lease-lost.error.js';
