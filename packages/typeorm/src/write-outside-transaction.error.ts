import { OncelyError } from '@oncely/core';

/**
 * A transactional idempotent call tried to write on a database connection other than its own
 * transaction: through an injected `Repository`, `dataSource.manager`, `dataSource.query()`, or a
 * transaction of its own. Such a write would commit even when the call fails and be made again by
 * its retry, so it is refused before it reaches the database and the whole call rolls back.
 */
export class WriteOutsideTransactionError extends OncelyError {
  readonly code = 'write_outside_transaction';

  /** @param statement what was refused: the statement's leading keyword, e.g. `INSERT`. */
  constructor(readonly statement: string) {
    super(
      `A transactional idempotent call tried to run ${statement} on a database connection other than its own transaction; the write was refused and the call rolls back. Written there, it would commit even when the call fails and run again on its retry. Write through the call's EntityManager: inject it with @IdempotencyManager() (or use the manager runInTransaction hands your work, or activeIdempotencyManager(dataSource) from a service) instead of an injected Repository, dataSource.manager or dataSource.query(), and do not open dataSource.transaction() inside the call (manager.transaction() nests safely). A write that must survive a rollback goes inside outsideIdempotencyTransaction(). See docs/transactions.md.`,
    );
  }
}
