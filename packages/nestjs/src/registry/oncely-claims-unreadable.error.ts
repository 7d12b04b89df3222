import { OncelyConfigurationError } from '@oncely/core';

/** `readOncelyClaims` cannot tell what an app claims from its module graph alone. */
export class OncelyClaimsUnreadableError extends OncelyConfigurationError {
  override readonly code = 'claims_unreadable';

  constructor(
    /** The root module's class name. */
    readonly rootModule: string,
    readonly problem: string,
  ) {
    super(`The module graph of ${rootModule} ${problem}`);
  }
}
