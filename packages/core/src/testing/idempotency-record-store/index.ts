export {
  idempotencyRecordStoreContract,
  type IdempotencyRecordStoreContractCase,
} from './idempotency-record-store.contract.js';
export type {
  IdempotencyRecordStoreContractOptions,
  IdempotencyRecordStoreHarness,
  IdempotencyRecordStoreHarnessFactory,
} from './idempotency-record-store.harness.js';
