/**
 * `@oncely/core/testing`: the contract suites a record store or a flight coordinator passes
 * ({@link idempotencyRecordStoreContract}, {@link flightCoordinatorContract}), a claim registry
 * ({@link claimRegistryContract}), and the HTTP
 * conformance suite a framework integration passes ({@link httpConformanceSuite}), with the
 * probes its fixture app uses. Cases run under any test runner (`node:assert`).
 *
 * @packageDocumentation
 * @module @oncely/core/testing
 */

export { registerContractCases, type ContractCase, type ContractFixture } from './contract-case.js';
export * from './claim-registry/index.js';
export * from './flight-coordinator/index.js';
export * from './idempotency-record-store/index.js';
export * from './http-conformance/index.js';
