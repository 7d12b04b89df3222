import type { RecordDialect } from './record-dialect.js';
import type { IdempotencyRecord } from './idempotency-record.entity.js';

/** The record table's name, unqualified: it is created in the DataSource's schema or database. */
export const recordTableName = 'oncely_idempotency_record';
export const keyHashIndexName = 'UQ_oncely_idempotency_record_key_hash';
export const expiresAtIndexName = 'IDX_oncely_idempotency_record_expires_at';

/** One column, as both the entity schema and the migration declare it. */
export interface RecordColumn {
  readonly property: keyof IdempotencyRecord;
  readonly name: string;
  readonly type: string;
  readonly length?: number;
  readonly nullable?: boolean;
  readonly primary?: boolean;
  readonly charset?: string;
  readonly collation?: string;
  /** Read back as a JS number (drivers return 64-bit integers as strings). */
  readonly numeric?: boolean;
}

/**
 * The columns with their explicit type on `dialect`. Only the primary key and the body differ:
 * SQLite's auto-increment needs `integer`, and the body needs a type holding megabytes of bytes
 * (`bytea`, `longblob`, `blob`). On MySQL/MariaDB, hex columns are ASCII with a binary collation
 * and text columns utf8mb4 with a binary collation, whatever the database's defaults are.
 */
export function recordColumns(dialect: RecordDialect): RecordColumn[] {
  const mysql = dialect === 'mysql';
  const hex = (property: keyof IdempotencyRecord, name: string): RecordColumn => ({
    property,
    name,
    type: 'varchar',
    length: 64,
    ...(mysql ? { charset: 'ascii', collation: 'ascii_bin' } : {}),
  });
  const text = (
    property: keyof IdempotencyRecord,
    name: string,
    nullable: boolean,
  ): RecordColumn => ({
    property,
    name,
    type: 'text',
    nullable,
    ...(mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {}),
  });
  const epochMs = (
    property: keyof IdempotencyRecord,
    name: string,
    nullable = false,
  ): RecordColumn => ({
    property,
    name,
    type: 'bigint',
    nullable,
    numeric: true,
  });
  return [
    {
      property: 'id',
      name: 'id',
      type: dialect === 'sqlite' ? 'integer' : 'bigint',
      primary: true,
      numeric: true,
    },
    hex('keyHash', 'key_hash'),
    text('key', 'key', false),
    hex('fingerprint', 'fingerprint'),
    { property: 'status', name: 'status', type: 'varchar', length: 16 },
    hex('ownerToken', 'owner_token'),
    {
      property: 'owner',
      name: 'owner',
      type: 'varchar',
      length: 128,
      nullable: true,
      ...(mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {}),
    },
    { property: 'fence', name: 'fence', type: 'integer', numeric: true },
    epochMs('leaseExpiresAt', 'lease_expires_at'),
    epochMs('retentionMs', 'retention_ms'),
    { property: 'responseStatus', name: 'response_status', type: 'integer', nullable: true },
    text('responseHeaders', 'response_headers', true),
    {
      property: 'responseBodyKind',
      name: 'response_body_kind',
      type: 'varchar',
      length: 8,
      nullable: true,
    },
    {
      property: 'responseBody',
      name: 'response_body',
      type: { postgres: 'bytea', mysql: 'longblob', sqlite: 'blob' }[dialect],
      nullable: true,
    },
    epochMs('createdAt', 'created_at'),
    epochMs('completedAt', 'completed_at', true),
    epochMs('expiresAt', 'expires_at'),
  ];
}
