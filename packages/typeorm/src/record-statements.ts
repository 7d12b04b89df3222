import type { RecordDialect } from './record-dialect.js';

/**
 * The store's SQL for one table on one dialect, built once. Every statement touches the row by
 * its unique `key_hash` (or its primary key), and every state change is one conditional
 * statement, so no change relies on a read made in an earlier statement.
 */
export class RecordStatements {
  readonly insert: string;
  readonly select: string;
  readonly takeOver: string;
  readonly complete: string;
  readonly release: string;
  readonly renew: string;
  /** Checks, without locking, that a lease still holds its row. */
  readonly checkHeld: string;
  /** Checks first thing in a transaction that a lease holds its row; locks it where harmless. */
  readonly lockHeld: string;
  readonly selectExpired: string;
  /** Deletes a row abandoned in progress (lease expired), named by its holder's owner and fence. */
  readonly deleteAbandoned: string;
  /** The columns `select` reads. */
  private readonly recordColumns: string;
  private readonly selectManyByCount = new Map<number, string>();

  constructor(
    private readonly dialect: RecordDialect,
    private readonly table: string,
    private readonly escape: (name: string) => string,
  ) {
    const c = escape;
    const held = `${c('key_hash')} = ? AND ${c('owner_token')} = ? AND ${c('fence')} = ? AND ${c('status')} = 'in_progress'`;
    const sql = (text: string) => this.numbered(text);

    this.insert = sql(
      `INSERT INTO ${table} (${c('key_hash')}, ${c('key')}, ${c('fingerprint')}, ${c('status')}, ${c('owner_token')}, ${c('fence')}, ${c('lease_expires_at')}, ${c('retention_ms')}, ${c('created_at')}, ${c('expires_at')}, ${c('owner')}) ` +
        `VALUES (?, ?, ?, 'in_progress', ?, 1, ?, ?, ?, ?, ?)`,
    );
    this.recordColumns = `${c('fingerprint')}, ${c('status')}, ${c('owner_token')}, ${c('owner')}, ${c('fence')}, ${c('expires_at')}, ${c('response_status')}, ${c('response_headers')}, ${c('response_body_kind')}, ${c('response_body')}`;
    this.select = sql(`SELECT ${this.recordColumns} FROM ${table} WHERE ${c('key_hash')} = ?`);
    // The previous holder is named by owner and fence: of concurrent takers that read the same
    // row exactly one matches, and a row completed, renewed or re-created meanwhile matches none.
    this.takeOver = sql(
      `UPDATE ${table} SET ${c('fingerprint')} = ?, ${c('status')} = 'in_progress', ${c('owner_token')} = ?, ${c('fence')} = ${c('fence')} + 1, ` +
        `${c('lease_expires_at')} = ?, ${c('retention_ms')} = ?, ${c('created_at')} = ?, ${c('expires_at')} = ?, ${c('owner')} = ?, ${c('completed_at')} = NULL, ` +
        `${c('response_status')} = NULL, ${c('response_headers')} = NULL, ${c('response_body_kind')} = NULL, ${c('response_body')} = NULL ` +
        `WHERE ${c('key_hash')} = ? AND ${c('owner_token')} = ? AND ${c('fence')} = ? AND ${c('expires_at')} <= ?`,
    );
    this.complete = sql(
      `UPDATE ${table} SET ${c('status')} = 'completed', ${c('response_status')} = ?, ${c('response_headers')} = ?, ${c('response_body_kind')} = ?, ` +
        `${c('response_body')} = ?, ${c('completed_at')} = ?, ${c('expires_at')} = ? + ${c('retention_ms')} WHERE ${held}`,
    );
    this.release = sql(`DELETE FROM ${table} WHERE ${held}`);
    this.renew = sql(
      `UPDATE ${table} SET ${c('lease_expires_at')} = ?, ${c('expires_at')} = ? WHERE ${held}`,
    );
    this.checkHeld = sql(`SELECT ${c('fence')} FROM ${table} WHERE ${held}`);
    this.lockHeld = {
      // Locks the row until commit, and a plain duplicate INSERT does not wait for that lock.
      postgres: `${this.checkHeld} FOR UPDATE`,
      // InnoDB makes a duplicate INSERT wait for a locked row: a lock here would stall every
      // concurrent begin for the whole transaction, so the row is only checked.
      mysql: this.checkHeld,
      // A write as the first statement takes SQLite's write lock up front, so the transaction
      // never has to upgrade a read lock later, which fails with SQLITE_BUSY mid-work.
      sqlite: sql(`UPDATE ${table} SET ${c('fence')} = ${c('fence')} WHERE ${held}`),
    }[dialect];
    this.deleteAbandoned = sql(`DELETE FROM ${table} WHERE ${held} AND ${c('expires_at')} <= ?`);
    this.selectExpired = sql(
      `SELECT ${c('id')} FROM ${table} WHERE ${c('expires_at')} <= ? ORDER BY ${c('expires_at')} LIMIT ?`,
    );
  }

  /** The rows of `count` key hashes, each with its `key_hash`, as `select` reads one. */
  selectMany(count: number): string {
    let text = this.selectManyByCount.get(count);
    if (text === undefined) {
      const c = this.escape;
      const hashes = Array.from({ length: count }, () => '?').join(', ');
      text = this.numbered(
        `SELECT ${c('key_hash')}, ${this.recordColumns} FROM ${this.table} WHERE ${c('key_hash')} IN (${hashes})`,
      );
      this.selectManyByCount.set(count, text);
    }
    return text;
  }

  /**
   * Deletes the given ids, re-checking expiry: a row renewed or taken over since then stays. On
   * PostgreSQL a row locked by a running `runInTransaction` is skipped rather than waited for, so
   * the rows already deleted are not held (blocking `begin` on their keys) for that long.
   */
  deleteExpired(count: number): string {
    const c = this.escape;
    const ids = Array.from({ length: count }, () => '?').join(', ');
    const expired = `${c('id')} IN (${ids}) AND ${c('expires_at')} <= ?`;
    return this.numbered(
      this.dialect === 'postgres'
        ? `DELETE FROM ${this.table} WHERE ${c('id')} IN (SELECT ${c('id')} FROM ${this.table} WHERE ${expired} FOR UPDATE SKIP LOCKED)`
        : `DELETE FROM ${this.table} WHERE ${expired}`,
    );
  }

  /** PostgreSQL numbers its parameters; the others take `?`. No `?` occurs in these texts otherwise. */
  private numbered(text: string): string {
    if (this.dialect !== 'postgres') return text;
    let index = 0;
    return text.replace(/\?/g, () => `$${++index}`);
  }
}
