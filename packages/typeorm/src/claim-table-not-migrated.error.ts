import { OncelyConfigurationError } from '@oncely/core';
import { CreateOncelySchema1796256000000 } from './create-oncely-schema.migration.js';

/**
 * The claims table of `TypeOrmClaimRegistry` is missing: oncely's migrations have not all run on
 * the DataSource. Raised at start-up, when the app registers its claims.
 */
export class ClaimTableNotMigratedError extends OncelyConfigurationError {
  /** Stable and machine-readable: what callers branch on, never the message. */
  override readonly code = 'claim_table_not_migrated';

  /** @param table the table as the registry addresses it, schema or database included. */
  constructor(readonly table: string) {
    super(
      `The claims table ${table} does not exist, so this app cannot register its claims with the services sharing the database. oncely's migration ${CreateOncelySchema1796256000000.name} has not run on this DataSource: build its options with withIdempotencyRecords(options) from @oncely/typeorm and run the migrations (migrationsRun: true, await dataSource.runMigrations(), or npx typeorm migration:run -d <your data source file>), or set claims: false to register none.`,
    );
  }
}
