import { OncelyError } from '../errors/oncely-error.js';

/** A scope (tenant, user) created as many idempotency records as its window allows. */
export class RecordQuotaExceededError extends OncelyError {
  readonly code = 'record_quota_exceeded';

  constructor(
    /** The scope as it appears in keys (escaped ids, never raw input). */
    readonly scope: string,
    /** The most new records the scope may create per window. */
    readonly limit: number,
    /** Time until the next window, when new records are accepted again. */
    readonly retryAfterMs: number,
  ) {
    super(
      `This tenant has started ${limit} new idempotent requests in the current window, the most it may. Retry after the Retry-After delay; replays of completed requests are not limited.`,
    );
  }
}
