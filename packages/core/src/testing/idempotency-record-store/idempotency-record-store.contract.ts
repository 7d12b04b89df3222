import { contractCases, type ContractCase } from '../contract-case.js';
import type {
  IdempotencyRecordStoreContractOptions,
  IdempotencyRecordStoreHarnessFactory,
  RecordCaseSettings,
} from './idempotency-record-store.harness.js';
import { leaseCases } from './lease.cases.js';
import { ownerCases } from './owner.cases.js';
import { previousVersionCases } from './previous-version.cases.js';
import { retentionCases } from './retention.cases.js';
import { roundTripCases } from './round-trip.cases.js';

/** One named, runner-agnostic case: resolves on success, throws an `AssertionError` otherwise. */
export type IdempotencyRecordStoreContractCase = ContractCase;

/**
 * The behaviour every `IdempotencyRecordStore` must show, as named async cases for any test
 * runner: `registerContractCases(idempotencyRecordStoreContract(factory), it)`.
 * Identities are random per case, so a shared backend is fine except for `purgeExpired` (see
 * `expiresNatively`). No case asserts on durations.
 */
export function idempotencyRecordStoreContract(
  factory: IdempotencyRecordStoreHarnessFactory,
  options: IdempotencyRecordStoreContractOptions = {},
): IdempotencyRecordStoreContractCase[] {
  const settings: RecordCaseSettings = {
    timing: { leaseTtlMs: options.leaseTtlMs ?? 500, retentionMs: options.retentionMs ?? 1000 },
    concurrency: options.concurrency ?? 10,
    expiresNatively: options.expiresNatively ?? false,
    past: (ms) => ms + Math.max(50, Math.round(ms / 10)),
  };
  return contractCases(factory, {
    ...leaseCases(settings),
    ...retentionCases(settings),
    ...roundTripCases(settings),
    ...previousVersionCases(settings),
    ...ownerCases(settings),
  });
}
