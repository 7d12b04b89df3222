import type { EntityManager } from 'typeorm';
import { outsideIdempotencyTransaction } from './call-transaction.js';
import { RecordConnection, type StatementResult } from './record-connection.js';
import type { RunInTransactionOptions } from './typeorm-idempotency-record-store.options.js';

/**
 * The record store's own statements, never held to the transaction of a call they run inside:
 * a provider method with its own idempotency record, called by a transactional handler, keeps
 * that record on its own connection by design.
 */
export class UnguardedRecordConnection extends RecordConnection {
  override execute(sql: string, parameters: unknown[]): Promise<StatementResult> {
    return outsideIdempotencyTransaction(() => super.execute(sql, parameters));
  }

  override transaction<T>(
    body: (manager: EntityManager) => Promise<T>,
    isolationLevel: RunInTransactionOptions['isolationLevel'],
    retryable: (error: unknown) => boolean,
  ): Promise<T> {
    return outsideIdempotencyTransaction(() => super.transaction(body, isolationLevel, retryable));
  }
}
