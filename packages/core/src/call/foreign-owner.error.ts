import { OncelyError } from '../errors/oncely-error.js';

/**
 * The key met a record of another service: two services claim one key space. Nothing was
 * replayed or overwritten, and nothing ran.
 */
export class ForeignOwnerError extends OncelyError {
  readonly code = 'foreign_owner';

  constructor(
    /** The record identity met (the business key without its fingerprint). */
    readonly identity: string,
    /** The service of this call (its `service` option). */
    readonly owner: string,
    /** The service whose record it is. */
    readonly foreignOwner: string,
  ) {
    super(
      `"${identity}" holds a record of service "${foreignOwner}", not of "${owner}": both services claim the same key space. Give each its own namespace or operation, or declare shared: true on the routes of both services if they really do the same work.`,
    );
  }
}
