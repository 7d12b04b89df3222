import type { RegistryClaim } from './registry-claim.js';

/**
 * Where the services sharing one backend register what their routes claim, so that two services
 * claiming one `namespace:operation:version` learn of each other at start-up instead of in
 * production. Claims go where the records go: a record store or a coordinator that other services
 * may share offers one (`ClaimRegistrySource`). Implementations: `InMemoryClaimRegistry` (one
 * process), `RedisClaimRegistry` in `@oncely/redis`, `TypeOrmClaimRegistry` in `@oncely/typeorm`.
 *
 * Every app instance (process) registers under its own `instance` id, one entry per claim, each
 * with its own expiry: replicas of one service hold the same claims side by side, a replica that
 * withdraws removes only its own entries, and a crashed one's entries lapse after `ttlMs`.
 */
export interface ClaimRegistry {
  /**
   * Writes (or renews) this instance's entry for every claim, expiring `ttlMs` from now, and
   * lists the live entries of other services that conflict with one of them: same mechanism and
   * `namespace:operation:version`, and not both `shared`. Entries of the same service never
   * conflict. Expired entries are never listed (and may be deleted on the way).
   */
  announce(announcement: ClaimAnnouncement): Promise<ClaimCheck>;

  /** Deletes this instance's entries for `claims`; other instances' entries stay. */
  withdraw(instance: string, claims: readonly RegistryClaim[]): Promise<void>;
}

/** One instance's claims, as `ClaimRegistry.announce` writes them. */
export interface ClaimAnnouncement {
  /** The announcing app instance: one random id per process, kept until it stops. */
  readonly instance: string;
  /** Every claim of the instance's routes (their `owner` is its service). */
  readonly claims: readonly RegistryClaim[];
  /** How long the entries live unless announced again (the heartbeat TTL), in milliseconds. */
  readonly ttlMs: number;
}

/** What `ClaimRegistry.announce` found. */
export type ClaimCheck =
  | {
      /** No other service claims any of the announced operations (or all that do share them). */
      readonly kind: 'clear';
    }
  | {
      /** Live claims of other services on the announced operations: one entry per pair. */
      readonly kind: 'conflicts';
      /** Never empty. */
      readonly conflicts: readonly ClaimConflict[];
    };

/** One of this app's claims and a live claim of another service on the same operation. */
export interface ClaimConflict {
  /** This app's claim. */
  readonly claim: RegistryClaim;
  /** The other service's claim, as its instance registered it. */
  readonly foreign: RegistryClaim;
}

/**
 * A record store or coordinator whose backend other services may share: it offers the registry
 * the claims on its records go to. A store without it registers no claims (its records are its
 * own process's, or it cannot tell).
 */
export interface ClaimRegistrySource {
  /** The registry of this store's or coordinator's backend; called once, at start-up. */
  claimRegistry(): ClaimRegistry;
}

/** Whether `value` offers a `claimRegistry()`. */
export function isClaimRegistrySource(value: unknown): value is ClaimRegistrySource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<ClaimRegistrySource>).claimRegistry === 'function'
  );
}

/** What names a claimed operation: mechanism, namespace, operation and version. */
export type ClaimedOperation = Pick<
  RegistryClaim,
  'mechanism' | 'namespace' | 'operation' | 'version'
>;

/** `namespace:operation:version` of a claim. */
export function claimedOperation(claim: ClaimedOperation): string {
  return `${claim.namespace}:${claim.operation}:${claim.version}`;
}

/**
 * What two claims conflict on: the mechanism and the operation. Claims of the two mechanisms
 * never conflict (idempotency records and SingleFlight keys live apart), as within one app.
 */
export function claimSlot(claim: ClaimedOperation): string {
  return `${claim.mechanism}|${claimedOperation(claim)}`;
}

/**
 * Whether a registered entry of `other` conflicts with `claim` (same slot assumed): another
 * service, and not both shared.
 */
export function isForeignClaim(
  claim: Pick<RegistryClaim, 'owner' | 'shared'>,
  other: Pick<RegistryClaim, 'owner' | 'shared'>,
): boolean {
  return other.owner !== claim.owner && !(other.shared && claim.shared);
}

/** A check listing `conflicts`, or `clear` when there are none. */
export function claimCheckOf(conflicts: readonly ClaimConflict[]): ClaimCheck {
  return conflicts.length === 0 ? { kind: 'clear' } : { kind: 'conflicts', conflicts };
}
