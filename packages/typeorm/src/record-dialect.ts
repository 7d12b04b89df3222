import { types } from 'node:util';
import { UnsupportedDatabaseError } from './unsupported-database.error.js';

/** The SQL families the record store speaks; each has its own column types and locking. */
export type RecordDialect = 'postgres' | 'mysql' | 'sqlite';

export function recordDialectOf(databaseType: string): RecordDialect {
  switch (databaseType) {
    case 'postgres':
      return 'postgres';
    case 'mysql':
    case 'mariadb':
      return 'mysql';
    case 'better-sqlite3':
      return 'sqlite';
    default:
      throw new UnsupportedDatabaseError(databaseType);
  }
}

interface DriverErrorFields {
  readonly code?: unknown;
  readonly errno?: unknown;
  readonly severity?: unknown;
}

/** TypeORM wraps driver errors in `QueryFailedError`; the driver's own fields decide. */
function driverFields(error: unknown): DriverErrorFields {
  if (typeof error !== 'object' || error === null) return {};
  const inner = (error as { driverError?: unknown }).driverError;
  return typeof inner === 'object' && inner !== null ? inner : error;
}

/**
 * A duplicate key: PostgreSQL SQLSTATE 23505, MySQL/MariaDB error 1062 (`ER_DUP_ENTRY`), SQLite
 * extended code `SQLITE_CONSTRAINT_UNIQUE` (or `_PRIMARYKEY`). Checked on the driver's codes, never
 * on message text, which changes with server language and version.
 */
export function isUniqueViolation(error: unknown): boolean {
  const { code, errno } = driverFields(error);
  return (
    code === '23505' ||
    code === 'ER_DUP_ENTRY' ||
    errno === 1062 ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * A failure after which the server rolled the statement back and running it again is safe: a
 * deadlock victim (PostgreSQL 40P01, MySQL 1213), a serialization failure (40001), a MySQL lock
 * wait timeout (1205), or SQLite's database being locked by another connection (`SQLITE_BUSY*`).
 * Connection losses are not in this list: a statement may have committed before the reply was
 * lost, so repeating it could misreport the outcome.
 */
export function isRetryableConflict(error: unknown): boolean {
  const { code, errno } = driverFields(error);
  return (
    code === '40P01' ||
    code === '40001' ||
    code === 'ER_LOCK_DEADLOCK' ||
    errno === 1213 ||
    code === 'ER_LOCK_WAIT_TIMEOUT' ||
    errno === 1205 ||
    (typeof code === 'string' && code.startsWith('SQLITE_BUSY'))
  );
}

/**
 * PostgreSQL ended the session (severity FATAL or PANIC, e.g. `pg_terminate_backend`, a server
 * shutdown). The error reaches the running query before the socket closes, so pg-pool would take
 * the client back as healthy and hand the dead connection to the next caller.
 */
export function isSessionEnded(error: unknown): boolean {
  const { severity } = driverFields(error);
  return severity === 'FATAL' || severity === 'PANIC';
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'PROTOCOL_CONNECTION_LOST',
  'ER_SERVER_SHUTDOWN',
  '57P01',
  '57P02',
  '57P03',
]);

/**
 * The connection to the database was lost or refused: the session ended (`pg_terminate_backend`,
 * a restart), a socket error, SQLSTATE class 08, or TypeORM's runner released under the failed
 * statement. What the statement did is then unknown to us but rolled back by the server unless it
 * had committed, so callers may retry; the store reports it as `RecordStoreUnavailableError`.
 */
export function isConnectionLost(error: unknown): boolean {
  if (isSessionEnded(error)) return true;
  if (types.isNativeError(error) && error.name === 'QueryRunnerAlreadyReleasedError') return true;
  const { code } = driverFields(error);
  if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  // node-postgres reports a socket closed under a query without any code.
  const message = types.isNativeError(error) ? error.message : '';
  return /Connection terminated|Client has encountered a connection error/.test(message);
}
