import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type { ClaimConflict } from './claim-registry.port.js';
import { claimedOperation } from './claim-registry.port.js';

/**
 * At start-up, another service holds a live claim on an operation this app claims too: both
 * would write the same records. Raised with `onForeignClaim: 'fail'` (the default), so the
 * second service never serves a request on the other's key space.
 */
export class ForeignClaimError extends OncelyConfigurationError {
  override readonly code = 'foreign_claim';

  constructor(
    /** Every conflicting pair found, the first of which the message names. */
    readonly conflicts: readonly ClaimConflict[],
  ) {
    const [first] = conflicts;
    const { claim, foreign } = first!;
    const more = conflicts.length > 1 ? ` (and ${conflicts.length - 1} more conflicts)` : '';
    super(
      `Service "${claim.owner}" (${claim.route}) claims ${claim.mechanism} operation "${claimedOperation(claim)}", which service "${foreign.owner}" (${foreign.route}) already claims${more}: both would read and write the same keys. Rename the namespace or the operation of one of them, or, if both really do the same work, mark both routes shared: true; if they are one service being renamed, list the other name in serviceAliases (docs/shared-claims.md#renaming-a-service). onForeignClaim: 'warn' starts anyway (the foreign-owner checks then refuse each other's records).`,
    );
  }
}
