import { OncelyError } from '../errors/oncely-error.js';

/** Options given to a route (a decorator or a middleware) are invalid. Raised at start-up. */
export class RouteOptionsError extends OncelyError {
  readonly code = 'route_options';

  constructor(
    readonly route: string,
    readonly option: string,
    readonly problem: string,
  ) {
    super(`Invalid oncely option "${option}" on ${route}: ${problem}`);
  }
}

/** A header name that must never be replayed was put on the replay allowlist. */
export class ReplayHeaderPolicyError extends OncelyError {
  readonly code = 'replay_header_refused';

  constructor(
    readonly header: string,
    readonly reason: string,
  ) {
    super(`The header "${header}" cannot be replayed: ${reason}. Remove it from replayHeaders.`);
  }
}

/** Two routes claim one operation and not both say `shared: true`. Raised at start-up. */
export class OperationClaimConflictError extends OncelyError {
  readonly code = 'operation_claim_conflict';

  /**
   * @param sameShape whether both routes build their keys the same way; then they would replay
   *   each other's responses, otherwise their keys could never match.
   */
  constructor(
    readonly operation: string,
    readonly firstRoute: string,
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

/** A protected handler produced a response oncely cannot keep or share (a stream, a file). */
export class UnsupportedResponseError extends OncelyError {
  readonly code = 'unsupported_response';

  constructor(
    readonly route: string,
    readonly kind: string,
  ) {
    super(
      `${route} returned ${kind}, which oncely cannot store or replay. Return a JSON value or a Buffer, or take this route out of oncely's protection (its @IdempotentKey/@SingleFlight decorators, or its oncely middleware) and store the file elsewhere, returning its id.`,
    );
  }
}

/** A `transactional` route runs on a record store that cannot join the handler's transaction. */
export class TransactionalStoreRequiredError extends OncelyError {
  readonly code = 'transactional_store_required';

  constructor(readonly route: string) {
    super(
      `${route} is marked transactional: true, but the configured record store cannot run the handler's writes and the record in one transaction. Register a store that supports transactions (a TypeORM DataSource), or remove transactional: true.`,
    );
  }
}
