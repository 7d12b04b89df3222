import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { CallTransaction } from './call-transaction.js';
import { writeStatementKind } from './write-statement-kind.js';

const guardedSources = new WeakSet<DataSource>();
const guardedRunners = new WeakSet<QueryRunner>();

/**
 * Makes `dataSource` refuse writes that a transactional idempotent call makes outside its own
 * transaction: any statement that is not a read (see `writeStatementKind`), sent while the
 * call's work runs on a connection other than the call's, fails with
 * `WriteOutsideTransactionError` before it reaches the database, and so does the call. That
 * covers injected repositories, `dataSource.manager`, `dataSource.query()`, query builders and a
 * `dataSource.transaction()` of the handler's own; reads stay allowed everywhere.
 *
 * `TypeOrmIdempotencyRecordStore` guards its own DataSource. Call this for any other DataSource
 * the handlers write to (business entities kept apart from the records), at start-up, before it
 * hands out query runners; calling it again changes nothing. Outside transactional calls a guarded
 * DataSource costs one context lookup per statement.
 */
export function guardTransactionalWrites(dataSource: DataSource): DataSource {
  if (guardedSources.has(dataSource)) return dataSource;
  guardedSources.add(dataSource);
  const createQueryRunner = dataSource.createQueryRunner;
  dataSource.createQueryRunner = (mode?: Parameters<DataSource['createQueryRunner']>[0]) => {
    const runner = createQueryRunner.call(dataSource, mode);
    guardRunner(runner);
    // better-sqlite3 hands every caller its one connection's runner, the call's own included: a
    // view of it tells writes that did not come through the call's manager from those that did.
    const call = CallTransaction.current();
    return call !== undefined && runner === call.runner ? foreignView(runner, dataSource) : runner;
  };
  return dataSource;
}

function guardRunner(runner: QueryRunner): void {
  if (guardedRunners.has(runner)) return;
  guardedRunners.add(runner);
  const query = runner.query;
  runner.query = function guardedQuery(this: QueryRunner, sql: string, ...rest: unknown[]) {
    const call = CallTransaction.current();
    if (call !== undefined && this !== call.runner) {
      const statement = writeStatementKind(sql);
      if (statement !== undefined) return Promise.reject(call.refuse(statement));
    }
    return Reflect.apply(query, this, [sql, ...rest]) as Promise<unknown>;
  } as QueryRunner['query'];
}

/**
 * The call's runner as seen by code that did not get it from the call: the same connection and
 * transaction state, but not the call's runner, with an `EntityManager` of its own (TypeORM's
 * persistence reads `runner.manager`, which must keep meaning the call's manager for the call).
 */
function foreignView(runner: QueryRunner, dataSource: DataSource): QueryRunner {
  let manager: EntityManager | undefined;
  const view: QueryRunner = new Proxy(runner, {
    get(target, property, receiver) {
      if (property === 'manager') return (manager ??= dataSource.createEntityManager(view));
      return Reflect.get(target, property, receiver) as unknown;
    },
    set(target, property, value) {
      if (property !== 'manager') return Reflect.set(target, property, value);
      manager = value as EntityManager;
      return true;
    },
  });
  return view;
}
