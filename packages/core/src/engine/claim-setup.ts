import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import { describeOptionValue } from '../errors/describe-option-value.js';
import type { ClaimRegistry } from '../registry/claim-registry.port.js';
import { isClaimRegistrySource } from '../registry/claim-registry.port.js';
import type { ClaimTarget, OnForeignClaim } from '../registry/claim-heartbeat.js';
import { positiveIntegerOption } from './option-checks.js';

/** Default lifetime of a registered claim unless renewed: 30 s. */
export const DEFAULT_CLAIM_TTL_MS = 30_000;
/** Default renewal interval of registered claims: 10 s. */
export const DEFAULT_CLAIM_RENEW_MS = 10_000;

/** The `claims` option: how the app's claims are registered with the services sharing its backend. */
export interface ClaimOptions {
  /**
   * How long a registered claim lives unless the app renews it, in milliseconds (default
   * 30 000): how long a crashed instance's claims keep blocking another service's boot.
   */
  readonly ttl?: number;
  /** How often the app renews its claims, in milliseconds (default 10 000); below `ttl`. */
  readonly renewEvery?: number;
  /**
   * Where every claim goes, instead of where the records go (the store's registry for
   * idempotency claims, the coordinator's for SingleFlight claims).
   */
  readonly registry?: ClaimRegistry;
}

/** The claim options, checked: `undefined` when the app registers no claims (`claims: false`). */
export interface ClaimSettings {
  readonly ttlMs: number;
  readonly renewEveryMs: number;
  readonly onForeignClaim: OnForeignClaim;
  readonly registry?: ClaimRegistry;
}

/** Checks `claims` and `onForeignClaim`, naming the first bad one. */
export function claimSettingsOf(
  owner: string,
  claims: unknown,
  onForeignClaim: unknown,
): ClaimSettings | undefined {
  if (onForeignClaim !== undefined && onForeignClaim !== 'fail' && onForeignClaim !== 'warn') {
    throw new OncelyConfigurationError(
      `${owner} option "onForeignClaim" must be 'fail' (the default: the boot fails when another service claims one of the app's operations) or 'warn', got ${describeOptionValue(onForeignClaim)}.`,
    );
  }
  if (claims === false) return undefined;
  if (claims !== undefined && (typeof claims !== 'object' || claims === null)) {
    throw new OncelyConfigurationError(
      `${owner} option "claims" must be an object ({ ttl, renewEvery, registry }) or false, got ${describeOptionValue(claims)}.`,
    );
  }
  const given = (claims ?? {}) as ClaimOptions;
  const ttlMs = positiveIntegerOption(owner, 'claims.ttl', given.ttl, DEFAULT_CLAIM_TTL_MS);
  const renewEveryMs = positiveIntegerOption(
    owner,
    'claims.renewEvery',
    given.renewEvery,
    Math.min(DEFAULT_CLAIM_RENEW_MS, Math.floor(ttlMs / 3) || 1),
  );
  if (renewEveryMs >= ttlMs) {
    throw new OncelyConfigurationError(
      `${owner} option "claims.renewEvery" (${renewEveryMs} ms) must be below "claims.ttl" (${ttlMs} ms), or the app's claims lapse between renewals; a third of it is usual.`,
    );
  }
  if (given.registry !== undefined && !isClaimRegistry(given.registry)) {
    throw new OncelyConfigurationError(
      `${owner} option "claims.registry" must be a ClaimRegistry (announce and withdraw), e.g. new RedisClaimRegistry(redis) from @oncely/redis.`,
    );
  }
  return {
    ttlMs,
    renewEveryMs,
    onForeignClaim: onForeignClaim ?? 'fail',
    ...(given.registry && { registry: given.registry }),
  };
}

/**
 * Where the claims go: where the records go. Idempotency claims to the record store's registry,
 * SingleFlight claims to the coordinator's (each only if it offers one: the in-memory ones do
 * not, their records being this engine's alone, so nobody can meet them), or every claim to `claims.registry` when given. A store and a
 * coordinator on one backend each register their own mechanism's claims there.
 */
export function claimTargetsOf(
  settings: ClaimSettings,
  engines: { readonly coordinator: object; readonly store: object },
  /** Adapters found unreachable at start-up: their registries are not waited for at first. */
  unreachable: ReadonlySet<object> = new Set(),
): ClaimTarget[] {
  if (settings.registry) {
    return [{ registry: settings.registry, mechanisms: new Set(['idempotency', 'single-flight']) }];
  }
  const targets: ClaimTarget[] = [];
  if (isClaimRegistrySource(engines.store)) {
    targets.push({
      registry: engines.store.claimRegistry(),
      mechanisms: new Set(['idempotency']),
      deferred: unreachable.has(engines.store),
    });
  }
  if (isClaimRegistrySource(engines.coordinator)) {
    targets.push({
      registry: engines.coordinator.claimRegistry(),
      mechanisms: new Set(['single-flight']),
      deferred: unreachable.has(engines.coordinator),
    });
  }
  return targets;
}

function isClaimRegistry(value: unknown): value is ClaimRegistry {
  const candidate = value as Partial<ClaimRegistry> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.announce === 'function' &&
    typeof candidate.withdraw === 'function'
  );
}
