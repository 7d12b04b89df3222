import { OncelyError } from '../errors/oncely-error.js';

/**
 * The key met a record or a lease of another service: two services claim one key space. Nothing
 * was replayed or overwritten, and nothing ran.
 */
export class ForeignOwnerError extends OncelyError {
  readonly code = 'foreign_owner';

  constructor(
    /** The key met: a record identity, or a SingleFlight key. */
    readonly key: string,
    /** The service of this call (its `service` option). */
    readonly owner: string,
    /** The service whose record it is. */
    readonly foreignOwner: string,
  ) {
    super(
      `"${key}" is held by service "${foreignOwner}", not by "${owner}": both services claim the same key space. Give each its own namespace or operation, or declare shared: true on the routes of both services if they really do the same work.`,
    );
  }
}
