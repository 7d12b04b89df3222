import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/** A header name that must never be replayed was put on the replay allowlist. */
export class ReplayHeaderPolicyError extends OncelyConfigurationError {
  override readonly code = 'replay_header_refused';

  constructor(
    readonly header: string,
    readonly reason: string,
  ) {
    super(`The header "${header}" cannot be replayed: ${reason}. Remove it from replayHeaders.`);
  }
}
