import { OncelyConfigurationError } from '@oncely/core';

/** `readOncelyClaims` cannot tell what an app claims from its module graph alone. */
export class OncelyClaimsUnreadableError extends OncelyConfigurationError {
  /** Stable and machine-readable: what callers branch on, never the message. */
  override readonly code = 'claims_unreadable';

  constructor(
    /** The root module's class name. */
    readonly rootModule: string,
    /** What the module graph does that hides its claims, and how to change it. */
    readonly problem: string,
  ) {
    super(`The module graph of ${rootModule} ${problem}`);
  }
}
