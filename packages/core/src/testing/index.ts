export * from './flight-coordinator.contract.js';
export * from './idempotency-record-store.contract.js';
export * from './http-conformance/index.js';
