import { idempotencyRecordStoreContract } from '@oncely/core/testing';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource } from 'typeorm';
import { FakeClock, recordDatabases, recordsTable } from './support/record-databases.js';

describe.each(recordDatabases())('TypeOrmIdempotencyRecordStore contract on %s', (_, database) => {
  let dataSource: DataSource;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
  });

  afterAll(() => database.tearDown());

  const cases = idempotencyRecordStoreContract(async () => {
    const clock = new FakeClock();
    return {
      store: new TypeOrmIdempotencyRecordStore(dataSource, { clock }),
      advance: async (ms) => clock.advance(ms),
      // The table lives in this run's own schema, database or file: emptying it is safe.
      cleanup: async () => {
        await dataSource.query(`DELETE FROM ${recordsTable(dataSource)}`);
      },
    };
  });

  it.each(cases.map((contractCase) => [contractCase.name, contractCase]))('%s', (_, c) => c.run());
});
