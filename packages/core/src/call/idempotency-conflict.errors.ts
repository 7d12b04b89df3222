import { OncelyError } from '../errors/oncely-error.js';

/** A request with the same idempotency identity is still being processed. */
export class IdempotencyConflictError extends OncelyError {
  readonly code = 'idempotency_in_flight';

  constructor(
    readonly identity: string,
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

  constructor(readonly identity: string) {
    super(
      `"${identity}" was already used with a different payload. Use a new idempotency key for a new operation, or resend exactly the original payload to receive its stored response.`,
    );
  }
}
