import { OncelyError } from '@oncely/core';

/** The DataSource's database type is not one the record store was built and tested for. */
export class UnsupportedDatabaseError extends OncelyError {
  readonly code = 'unsupported_database';

  constructor(
    /** The DataSource's `type`, e.g. `oracle`; the text `undefined` when none was given. */
    readonly databaseType: string,
  ) {
    super(
      `@oncely/typeorm does not support the "${databaseType}" database type. Use a DataSource of type "postgres", "mysql", "mariadb" or "better-sqlite3".`,
    );
  }
}
