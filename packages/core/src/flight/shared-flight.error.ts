import { OncelyError } from '../errors/oncely-error.js';

/**
 * A deterministic failure of another caller's execution (or a cached one), rebuilt from what the
 * failure policy serialised. Under `HttpStatusFailurePolicy` it keeps the original HTTP status
 * and body, so HTTP layers can answer exactly as the leader's caller was answered.
 */
export class SharedFlightError extends OncelyError {
  readonly code = 'flight_error_shared';

  constructor(
    /** The original error's name, e.g. `BadRequestException`. */
    readonly originalName: string,
    message: string,
    /** The original HTTP status (a 4xx under `HttpStatusFailurePolicy`; 500 for engine errors). */
    readonly status: number,
    /** The original error's own `code`, when it had one. */
    readonly originalCode?: string | number,
    /** The original response body (e.g. a Nest `HttpException`'s response), when it had one. */
    readonly body?: unknown,
  ) {
    super(message);
  }
}
