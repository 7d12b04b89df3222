import { InMemoryClaimRegistry } from '@oncely/core';
import { claimRegistryContract, registerContractCases } from '@oncely/core/testing';

describe('InMemoryClaimRegistry', () => {
  registerContractCases(
    claimRegistryContract(() => {
      let now = 1_000_000;
      const registry = new InMemoryClaimRegistry(() => now);
      return {
        registry,
        peer: registry,
        advance: async (ms) => {
          now += ms;
        },
        cleanup: async () => undefined,
      };
    }),
    it,
  );
});
