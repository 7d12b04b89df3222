import type { TableColumnOptions } from 'typeorm';
import type { ClaimColumn } from './claim-table.js';

/** A declared column (of the record or the claims table) as TypeORM creates it. */
export function tableColumnOptions(column: ClaimColumn): TableColumnOptions {
  return {
    name: column.name,
    type: column.type,
    ...(column.length === undefined ? {} : { length: String(column.length) }),
    isNullable: column.nullable ?? false,
    ...(column.primary
      ? { isPrimary: true, isGenerated: true, generationStrategy: 'increment' as const }
      : {}),
    ...(column.charset ? { charset: column.charset, collation: column.collation } : {}),
  };
}
