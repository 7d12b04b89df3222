import { types } from 'node:util';
import type { DataSource } from 'typeorm';
import { isSessionEnded } from './record-dialect.js';
import type { StatementResult } from './statement-result.js';

/** The part of a node-postgres pool and client the record store uses. */
interface PgPool {
  connect(): Promise<PgClient>;
}

interface PgClient {
  query(text: string, values: unknown[]): Promise<{ rows?: unknown[]; rowCount?: number | null }>;
  release(destroy?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Runs one auto-committed statement on a client of the DataSource's own node-postgres pool,
 * without a TypeORM query runner: a claim and a completion are the hot path of every call, and
 * the query runner around each of them (its creation, the connection handshake with the pool,
 * the broadcaster events, the structured result, the write guard's context switch) cost more
 * Node CPU than the statement itself. The statement is still logged through the DataSource's
 * logger as TypeORM logs its own; entity subscribers' `beforeQuery`/`afterQuery` do not see it.
 *
 * `undefined` when the DataSource has no node-postgres pool to take clients from (a driver
 * this store does not know): the store then goes through query runners as for other databases.
 */
export function postgresPoolStatement(
  dataSource: DataSource,
): ((sql: string, parameters: unknown[]) => Promise<StatementResult>) | undefined {
  const pool = (dataSource.driver as { master?: Partial<PgPool> }).master;
  if (typeof pool?.connect !== 'function') return undefined;
  const master = pool as PgPool;
  return async (sql, parameters) => {
    const { logger } = dataSource;
    logger.logQuery(sql, parameters);
    const client = await master.connect();
    // The pool listens for errors of idle clients only: a session the server ends while this
    // client is out (pg_terminate_backend, a failover) emits `error` on it, which would crash
    // the process with nobody listening.
    let lost: Error | undefined;
    const onError = (error: Error) => (lost ??= error);
    client.on('error', onError);
    let failure: unknown;
    try {
      const raw = await client.query(sql, parameters);
      return { records: raw.rows ?? [], affected: raw.rowCount ?? 0 };
    } catch (error) {
      failure = error;
      logger.logQueryError(types.isNativeError(error) ? error : String(error), sql, parameters);
      throw error;
    } finally {
      client.off('error', onError);
      // A session the server ended leaves with its client, so the pool never hands it out again;
      // any other failure (a duplicate key, a lock conflict) leaves the connection usable.
      client.release(lost ?? (isSessionEnded(failure) ? (failure as Error) : undefined));
    }
  };
}
