export {
  claimRegistryContract,
  type ClaimRegistryContractOptions,
  type ClaimRegistryHarness,
  type ClaimRegistryHarnessFactory,
} from './claim-registry.contract.js';
