import type {
  BeginOptions,
  IdempotencyRecordStore,
} from '../../record/idempotency-record-store.port.js';
import type { ContractCaseBodies, ContractFixture } from '../contract-case.js';

/** What one contract case runs against; the factory builds a fresh one per case. */
export interface IdempotencyRecordStoreHarness extends ContractFixture {
  /** The store under test, holding no records of other cases. */
  readonly store: IdempotencyRecordStore;
}

/** Builds one harness per case; `idempotencyRecordStoreContract` calls it before each case. */
export type IdempotencyRecordStoreHarnessFactory = () => Promise<IdempotencyRecordStoreHarness>;

/** Timings and concurrency of the record store contract, and what the backend does itself. */
export interface IdempotencyRecordStoreContractOptions {
  /** Lease TTL of the cases, in ms. Default 500: short, because `advance` may really sleep. */
  readonly leaseTtlMs?: number;
  /** Retention of completed records in the cases, in ms. Default 1000. */
  readonly retentionMs?: number;
  /** How many `begin` calls the concurrency cases fire at once. Default 10. */
  readonly concurrency?: number;
  /**
   * The backend drops expired records by itself (e.g. Redis key TTLs), so `purgeExpired` never
   * finds any to count. Without it, `purgeExpired` must count exactly the expired records, which
   * needs a store that sees only this harness's records (own table, schema or key prefix).
   */
  readonly expiresNatively?: boolean;
}

/** The contract options with their defaults applied, as the case files see them. */
export interface RecordCaseSettings {
  readonly timing: BeginOptions;
  readonly concurrency: number;
  readonly expiresNatively: boolean;
  /** `ms` plus a margin a real clock also honours: how far to advance past an expiry. */
  past(ms: number): number;
}

export type RecordCases = ContractCaseBodies<IdempotencyRecordStoreHarness>;
