import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/** Options given to a route (a decorator or a middleware) are invalid. Raised at start-up. */
export class RouteOptionsError extends OncelyConfigurationError {
  override readonly code = 'route_options';

  constructor(
    /** The route whose options are invalid. */
    readonly route: string,
    /** The invalid option's name, e.g. `scope` or `replayHeaders`. */
    readonly option: string,
    /** What is wrong with it and how to fix it. */
    readonly problem: string,
  ) {
    super(`Invalid oncely option "${option}" on ${route}: ${problem}`);
  }
}

/** Two routes claim one operation and not both say `shared: true`. Raised at start-up. */
export class OperationClaimConflictError extends OncelyConfigurationError {
  override readonly code = 'operation_claim_conflict';

  /**
   * @param sameShape whether both routes build their keys the same way; then they would replay
   *   each other's responses, otherwise their keys could never match.
   */
  constructor(
    /** The claimed `namespace:operation:version`. */
    readonly operation: string,
    /** The route that claimed the operation first. */
    readonly firstRoute: string,
    /** The route whose claim was refused. */
    readonly secondRoute: string,
    readonly sameShape = false,
  ) {
    super(
      `${firstRoute} and ${secondRoute} both claim the operation "${operation}"${
        sameShape
          ? ', so one route would replay the responses the other one produced'
          : ' with different key shapes, so their keys could never match and one would silently shadow the other'
      }. Give one of them its own operation name, or mark both with shared: true if they really are one operation.`,
    );
  }
}

/**
 * A route lists a version in `previousVersions` that another route of the app still claims.
 * Raised at start-up.
 */
export class PreviousVersionClaimedError extends OncelyConfigurationError {
  override readonly code = 'previous_version_claimed';

  /**
   * @param operation the `namespace:operation:version` both name
   * @param claimingRoute the route claiming it as its current version
   * @param listingRoute the route listing that version in `previousVersions`
   */
  constructor(
    readonly operation: string,
    readonly claimingRoute: string,
    readonly listingRoute: string,
  ) {
    super(
      `${listingRoute} lists the version of "${operation}" in previousVersions, but ${claimingRoute} still claims it: ${listingRoute} would replay what ${claimingRoute} ran, yet ${claimingRoute} never reads ${listingRoute}'s records, so a request first run by ${listingRoute} and retried on ${claimingRoute} would run twice. Move ${claimingRoute} to the new version (or remove it), or drop that version from previousVersions.`,
    );
  }
}

/** A `transactional` route runs on a record store that cannot join the handler's transaction. */
export class TransactionalStoreRequiredError extends OncelyConfigurationError {
  override readonly code = 'transactional_store_required';

  constructor(
    /** The route marked `transactional: true`. */
    readonly route: string,
  ) {
    super(
      `${route} is marked transactional: true, but the configured record store cannot run the handler's writes and the record in one transaction. Register a store that supports transactions (a TypeORM DataSource), or remove transactional: true.`,
    );
  }
}
