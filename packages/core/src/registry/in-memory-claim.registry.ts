import type {
  ClaimAnnouncement,
  ClaimCheck,
  ClaimConflict,
  ClaimRegistry,
} from './claim-registry.port.js';
import { claimCheckOf, claimSlot, isForeignClaim } from './claim-registry.port.js';
import type { RegistryClaim } from './registry-claim.js';

interface Entry {
  readonly claim: RegistryClaim;
  readonly expiresAt: number;
}

/**
 * Claims of the engines sharing this object, in this process's memory, under the same rules as
 * the shared registries (one entry per instance, each with its own expiry): for apps of several
 * engines in one process (`claims: { registry }`) and for tests. The in-memory store and
 * coordinator need none: their records are one engine's alone, so they register no claims.
 */
export class InMemoryClaimRegistry implements ClaimRegistry {
  /** Slot → instance → entry. */
  readonly #slots = new Map<string, Map<string, Entry>>();

  constructor(private readonly now: () => number = Date.now) {}

  async announce({ instance, claims, ttlMs }: ClaimAnnouncement): Promise<ClaimCheck> {
    const now = this.now();
    const conflicts: ClaimConflict[] = [];
    for (const claim of claims) {
      const slot = claimSlot(claim);
      const entries = this.#slots.get(slot) ?? new Map<string, Entry>();
      this.#slots.set(slot, entries);
      entries.set(instance, { claim, expiresAt: now + ttlMs });
      for (const [other, entry] of entries) {
        if (entry.expiresAt <= now) {
          entries.delete(other);
        } else if (other !== instance && isForeignClaim(claim, entry.claim)) {
          conflicts.push({ claim, foreign: entry.claim });
        }
      }
    }
    return claimCheckOf(conflicts);
  }

  async withdraw(instance: string, claims: readonly RegistryClaim[]): Promise<void> {
    for (const claim of claims) {
      const slot = claimSlot(claim);
      const entries = this.#slots.get(slot);
      entries?.delete(instance);
      if (entries?.size === 0) this.#slots.delete(slot);
    }
  }
}
