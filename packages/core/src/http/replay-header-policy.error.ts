import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/** A header name that must never be replayed was put on the replay allowlist. */
export class ReplayHeaderPolicyError extends OncelyConfigurationError {
  override readonly code = 'replay_header_refused';

  constructor(
    /** The refused header name, lower case. */
    readonly header: string,
    /** Why replaying it is unsafe, e.g. that it sets a cookie. */
    readonly reason: string,
  ) {
    super(`The header "${header}" cannot be replayed: ${reason}. Remove it from replayHeaders.`);
  }
}
