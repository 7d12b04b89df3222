export { registerContractCases, type ContractCase, type ContractFixture } from './contract-case.js';
export * from './flight-coordinator/index.js';
export * from './idempotency-record-store/index.js';
export * from './http-conformance/index.js';
