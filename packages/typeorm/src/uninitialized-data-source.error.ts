import { OncelyError } from '@oncely/core';

/** The record store was used before its DataSource was initialised. */
export class UninitializedDataSourceError extends OncelyError {
  readonly code = 'uninitialized_data_source';

  constructor() {
    super(
      'The DataSource of TypeOrmIdempotencyRecordStore is not initialised yet. Await dataSource.initialize() (or let TypeOrmModule do it) before the first request reaches the store.',
    );
  }
}
