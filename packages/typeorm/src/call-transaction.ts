import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { WriteOutsideTransactionError } from './write-outside-transaction.error.js';

const calls = new AsyncLocalStorage<CallTransaction | undefined>();

/**
 * The transaction of one transactional idempotent call, known to everything its work runs, so
 * that a guarded DataSource can tell the call's own writes from writes that would escape it.
 */
export class CallTransaction {
  private running = true;
  private refusal?: WriteOutsideTransactionError;

  private constructor(
    readonly dataSource: DataSource,
    readonly manager: EntityManager,
  ) {}

  /** The connection the call's transaction runs on: the only one it may write through. */
  get runner(): QueryRunner | undefined {
    return this.manager.queryRunner;
  }

  /**
   * The call whose work runs in this async context, until that call settles: a timer or a task
   * the work left behind is not held to a transaction that has ended.
   */
  static current(): CallTransaction | undefined {
    const call = calls.getStore();
    return call?.running ? call : undefined;
  }

  /**
   * Runs `work` as the call on `manager`'s transaction. A write it made elsewhere fails the call
   * with `WriteOutsideTransactionError`, even when the work caught the refusal and carried on.
   */
  static async run<T>(
    dataSource: DataSource,
    manager: EntityManager,
    work: () => Promise<T>,
  ): Promise<T> {
    const call = new CallTransaction(dataSource, manager);
    let result: T;
    try {
      result = await calls.run(call, work);
    } catch (error) {
      throw call.refusal ?? error;
    } finally {
      call.running = false;
    }
    if (call.refusal) throw call.refusal;
    return result;
  }

  /** Records a refused write (the call will fail with the first) and returns its error. */
  refuse(statement: string): WriteOutsideTransactionError {
    const refusal = new WriteOutsideTransactionError(statement);
    this.refusal ??= refusal;
    return refusal;
  }
}

/**
 * The `EntityManager` of the transactional idempotent call running in this async context on
 * `dataSource`, or `undefined` outside one. Lets services and repositories that are not handed
 * the manager join the call's transaction: `(activeIdempotencyManager(dataSource) ??
 * dataSource.manager).getRepository(Order)`, or a `@nestjs-cls/transactional` adapter (see
 * docs/transactions.md).
 */
export function activeIdempotencyManager(dataSource: DataSource): EntityManager | undefined {
  const call = CallTransaction.current();
  return call?.dataSource === dataSource ? call.manager : undefined;
}

/**
 * Runs `work` outside the transactional idempotent call it is part of, so its writes on other
 * connections are allowed. They commit on their own: they stay when the call rolls back and are
 * made again by its retry. Meant for what must outlive a failure, such as an audit entry.
 */
export function outsideIdempotencyTransaction<T>(work: () => T): T {
  return calls.run(undefined, work);
}
