import type { RecordDialect } from './record-dialect.js';

/** The claims table's name, unqualified: created next to the record table. */
export const claimTableName = 'oncely_claim';
export const claimSlotInstanceIndexName = 'UQ_oncely_claim_slot_instance';
export const claimExpiresAtIndexName = 'IDX_oncely_claim_expires_at';

/** One column of the claims table, as the migration declares it. */
export interface ClaimColumn {
  readonly name: string;
  readonly type: string;
  readonly length?: number;
  readonly nullable?: boolean;
  readonly primary?: boolean;
  readonly charset?: string;
  readonly collation?: string;
}

/**
 * The claims table's columns on `dialect`: one row per app instance and claimed operation
 * (`slot_hash`, the SHA-256 of `<mechanism>|<namespace:operation:version>`, with `instance`
 * unique), the claim as JSON, its service and `shared` flag readable by operators, and its
 * expiry (epoch milliseconds of the announcing app's clock).
 */
export function claimColumns(dialect: RecordDialect): ClaimColumn[] {
  const mysql = dialect === 'mysql';
  const ascii = mysql ? { charset: 'ascii', collation: 'ascii_bin' } : {};
  const utf8 = mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {};
  return [
    { name: 'id', type: dialect === 'sqlite' ? 'integer' : 'bigint', primary: true },
    { name: 'slot_hash', type: 'varchar', length: 64, ...ascii },
    { name: 'slot', type: 'varchar', length: 255, ...utf8 },
    { name: 'instance', type: 'varchar', length: 64, ...ascii },
    { name: 'service', type: 'varchar', length: 128, ...utf8 },
    { name: 'shared', type: 'integer' },
    { name: 'claim', type: 'text', ...utf8 },
    { name: 'expires_at', type: 'bigint' },
  ];
}
