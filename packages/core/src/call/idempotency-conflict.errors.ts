import { OncelyError } from '../errors/oncely-error.js';

/** A request with the same idempotency identity is still being processed. */
export class IdempotencyConflictError extends OncelyError {
  readonly code = 'idempotency_in_flight';

  constructor(
    /** The record identity in flight (the business key without its fingerprint). */
    readonly identity: string,
    /** How long until the first request's lease runs out: when a retry may get its outcome. */
    readonly retryAfterMs: number,
  ) {
    super(
      `A request for "${identity}" is still in flight. Retry after ${Math.ceil(retryAfterMs / 1000)} s to receive its outcome, or use onBusy: 'wait' to wait for it.`,
    );
  }
}

/** The identity was used before with a different payload; the stored record is left untouched. */
export class IdempotencyMismatchError extends OncelyError {
  readonly code = 'idempotency_mismatch';

  constructor(
    /** The record identity used before with another payload. */
    readonly identity: string,
  ) {
    super(
      `"${identity}" was already used with a different payload. Use a new idempotency key for a new operation, or resend exactly the original payload to receive its stored response.`,
    );
  }
}
