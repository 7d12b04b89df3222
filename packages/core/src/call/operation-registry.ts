import type { ProtectedRoute } from './protected-route.js';
import { OperationClaimConflictError, PreviousVersionClaimedError } from './route-setup.errors.js';

/** One route's claim on an operation, for one mechanism. */
export interface OperationClaim {
  /**
   * Claims of the two mechanisms never conflict: a route may be both idempotent and single-flight.
   */
  readonly mechanism: 'idempotency' | 'single-flight';
  /** `namespace:operation:version`. */
  readonly operation: string;
  /** The claiming route's name, as error messages show it. */
  readonly route: string;
  /** How the route builds its keys; routes of equal shape would replay each other's responses. */
  readonly shape: string;
  /** Whether the route declared `shared: true`: only routes that all did may share an operation. */
  readonly shared: boolean;
  /**
   * An idempotency claim's `previousVersions`: the `namespace:operation:version` of each version
   * whose records also answer this route's misses, newest first.
   */
  readonly previousVersions?: readonly string[];
}

/**
 * Who claims which operation. One operation, one route: a second route claiming the same
 * `namespace:operation:version` fails, naming both routes, unless both say `shared: true`. Equal
 * key shapes are no excuse: two routes that merely declare the same options would replay each
 * other's responses (a shape a client of the one cannot parse), so sharing is always declared.
 * Nor may a version one route lists in `previousVersions` be another route's current one.
 */
export class OperationRegistry {
  private readonly claims = new Map<string, OperationClaim[]>();

  /**
   * Claims the operations of a route's mechanisms. Throws `OperationClaimConflictError` when
   * another route already claims one and not both are shared.
   */
  register(route: ProtectedRoute): void {
    if (route.idempotent) {
      this.claim({
        mechanism: 'idempotency',
        operation: route.idempotent.operation,
        route: route.name,
        shape: route.idempotent.shape,
        shared: route.idempotent.shared,
        previousVersions: previousOperations(
          route.idempotent.operation,
          route.idempotent.previousVersions,
        ),
      });
    }
    if (route.singleFlight) {
      this.claim({
        mechanism: 'single-flight',
        operation: route.singleFlight.operation,
        route: route.name,
        shape: route.singleFlight.shape,
        shared: route.singleFlight.shared,
      });
    }
  }

  /** Adds one claim, refusing it like `register` does; a route's repeated claim is accepted. */
  claim(claim: OperationClaim): void {
    this.refusePreviousVersionClaimed(claim);
    const id = `${claim.mechanism}|${claim.operation}`;
    const existing = this.claims.get(id) ?? [];
    for (const other of existing) {
      if (other.route === claim.route) continue;
      if (!(other.shared && claim.shared)) {
        throw new OperationClaimConflictError(
          claim.operation,
          other.route,
          claim.route,
          other.shape === claim.shape,
        );
      }
    }
    this.claims.set(id, [...existing, claim]);
  }

  /**
   * A version one route lists as previous must not be another route's current one: that route
   * never reads the newer records, so retries moving between the two would run twice.
   */
  private refusePreviousVersionClaimed(claim: OperationClaim): void {
    if (claim.mechanism !== 'idempotency') return;
    const others = this.list().filter(
      (other) => other.mechanism === 'idempotency' && other.route !== claim.route,
    );
    const listing = others.find((other) => other.previousVersions?.includes(claim.operation));
    if (listing) throw new PreviousVersionClaimedError(claim.operation, claim.route, listing.route);
    for (const previous of claim.previousVersions ?? []) {
      const claimant = others.find((other) => other.operation === previous);
      if (claimant) throw new PreviousVersionClaimedError(previous, claimant.route, claim.route);
    }
  }

  /** Every claim, in registration order. */
  list(): readonly OperationClaim[] {
    return [...this.claims.values()].flat();
  }
}

/** `namespace:operation:` of `operation` followed by each of `versions`. */
function previousOperations(operation: string, versions: readonly string[]): readonly string[] {
  const family = operation.slice(0, operation.lastIndexOf(':') + 1);
  return versions.map((version) => family + version);
}
