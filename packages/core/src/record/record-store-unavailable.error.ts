import { OncelyError } from '../errors/oncely-error.js';

/**
 * The durable record store could not be reached, or lost its connection mid-operation. Whatever
 * was in flight rolled back or never ran; the record still holds its last confirmed state, so
 * the request is safe to retry.
 */
export class RecordStoreUnavailableError extends OncelyError {
  readonly code = 'record_store_unavailable';

  constructor(
    /** Which backend failed, e.g. `postgres`, as the message names it. */
    readonly backend: string,
    options?: ErrorOptions,
  ) {
    super(
      `The idempotency record store (${backend}) lost its connection; nothing was confirmed. Retry the request; if it keeps failing, check that the database is up and reachable.`,
      options,
    );
  }
}
