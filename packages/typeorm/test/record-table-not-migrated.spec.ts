import { OncelyConfigurationError, createOncelyEngine } from '@oncely/core';
import {
  RecordTableNotMigratedError,
  TypeOrmIdempotencyRecordStore,
  UninitializedDataSourceError,
  idempotencyRecordMigrations,
  recordTableName,
} from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { recordDatabases, recordsTable } from './support/record-databases.js';

const howToFix =
  /CreateOncelySchema1796256000000.*withIdempotencyRecords\(options\).*migrationsRun: true.*runMigrations\(\).*migration:run/;

describe.each(recordDatabases())('the record table check at start-up on %s', (_, database) => {
  let dataSource: DataSource;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
  });

  afterAll(() => database.tearDown());

  async function tablePresent(): Promise<boolean> {
    const runner = dataSource.createQueryRunner();
    return runner.hasTable(recordTableName).finally(() => runner.release());
  }

  /** Runs `check` on the table as `breakTable` leaves it, then has the migrations put it back. */
  async function withBrokenTable(breakTable: () => Promise<unknown>, check: () => Promise<void>) {
    await breakTable();
    try {
      await check();
    } finally {
      for (let undo = 0; undo < idempotencyRecordMigrations.length; undo += 1) {
        if (!(await tablePresent())) break;
        await dataSource.undoLastMigration();
      }
      await dataSource.runMigrations();
    }
  }

  async function undoAllMigrations(): Promise<void> {
    for (const _ of idempotencyRecordMigrations) await dataSource.undoLastMigration();
  }

  it('passes on the migrated table', async () => {
    const store = new TypeOrmIdempotencyRecordStore(dataSource);
    await expect(store.start()).resolves.toBeUndefined();
    await store.close();
  });

  it('fails the engine start on a missing table, naming the migration and how to run it', () =>
    withBrokenTable(undoAllMigrations, async () => {
      const engine = createOncelyEngine({
        namespace: 'shop',
        store: new TypeOrmIdempotencyRecordStore(dataSource),
      });
      const failure = engine.start();
      await expect(failure).rejects.toBeInstanceOf(RecordTableNotMigratedError);
      await expect(failure).rejects.toBeInstanceOf(OncelyConfigurationError);
      await expect(failure).rejects.toMatchObject({
        code: 'record_table_not_migrated',
        missingColumns: [],
        table: expect.stringMatching(/oncely_idempotency_record$/),
      });
      await expect(failure).rejects.toThrow(/does not exist/);
      await expect(failure).rejects.toThrow(howToFix);
      // A refused start closes what the engine owns; the DataSource is the app's and stays open.
      expect(dataSource.isInitialized).toBe(true);
    }));

  it('fails on a table whose columns are behind, naming the missing ones', () =>
    withBrokenTable(
      () =>
        dataSource.query(
          `ALTER TABLE ${recordsTable(dataSource)} DROP COLUMN ${dataSource.driver.escape('completed_at')}`,
        ),
      async () => {
        const failure = new TypeOrmIdempotencyRecordStore(dataSource).start();
        await expect(failure).rejects.toBeInstanceOf(RecordTableNotMigratedError);
        await expect(failure).rejects.toMatchObject({ missingColumns: ['completed_at'] });
        await expect(failure).rejects.toThrow(/lacks the column\(s\) completed_at/);
        await expect(failure).rejects.toThrow(howToFix);
      },
    ));

  it('fails on a DataSource not initialised yet', async () => {
    const uninitialised = new DataSource({ ...dataSource.options });
    await expect(new TypeOrmIdempotencyRecordStore(uninitialised).start()).rejects.toBeInstanceOf(
      UninitializedDataSourceError,
    );
  });
});
