import { createOncelyEngine, ForeignClaimError } from '@oncely/core';
import { claimRegistryContract, registerContractCases } from '@oncely/core/testing';
import {
  ClaimTableNotMigratedError,
  TypeOrmClaimRegistry,
  TypeOrmIdempotencyRecordStore,
  claimTableName,
} from '@oncely/typeorm';
import type { DataSource } from 'typeorm';
import { FakeClock, recordDatabases } from './support/record-databases.js';

describe.each(recordDatabases())('TypeOrmClaimRegistry on %s', (_, database) => {
  let dataSource: DataSource;
  let other: DataSource;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
    // Another DataSource, as another service's process has.
    other = await database.connect();
  }, 60_000);

  afterAll(() => database.tearDown());

  /** The claims table, in this run's schema on PostgreSQL (its own database or file elsewhere). */
  const table = () => {
    const { options, driver } = dataSource;
    const schema = options.type === 'postgres' ? options.schema : undefined;
    return [schema, claimTableName]
      .filter((part): part is string => Boolean(part))
      .map((part) => driver.escape(part))
      .join('.');
  };

  registerContractCases(
    claimRegistryContract(
      () => {
        const clock = new FakeClock();
        return {
          registry: new TypeOrmClaimRegistry(dataSource, { clock }),
          peer: new TypeOrmClaimRegistry(other, { clock }),
          advance: async (ms) => clock.advance(ms),
          // The table lives in this run's own schema, database or file: emptying it is safe.
          cleanup: async () => {
            await dataSource.query(`DELETE FROM ${table()}`);
          },
        };
      },
      { concurrency: 8 },
    ),
    it,
  );

  it('is where a TypeORM store sends the idempotency claims: the second service’s boot fails, the rows stay exact', async () => {
    const engines = ['orders-api', 'billing-api'].map((service) => {
      const engine = createOncelyEngine({
        namespace: 'claims-sql',
        service,
        store: new TypeOrmIdempotencyRecordStore(service === 'orders-api' ? dataSource : other),
      });
      engine.defineRoute(`${service}.pay`, {
        idempotent: { operation: 'pay', scope: 'user.id' },
      });
      return engine;
    });
    try {
      await engines[0]!.registerClaims();
      await expect(engines[1]!.registerClaims()).rejects.toThrow(ForeignClaimError);
      const rows = await dataSource.query<{ service: string; slot: string }[]>(
        `SELECT ${dataSource.driver.escape('service')} AS service, ${dataSource.driver.escape('slot')} AS slot FROM ${table()}`,
      );
      expect(rows).toEqual([{ service: 'orders-api', slot: 'idempotency|claims-sql:pay:v1' }]);
      await engines[0]!.close();
      expect(await dataSource.query(`SELECT * FROM ${table()}`)).toEqual([]);
    } finally {
      await Promise.all(engines.map((engine) => engine.close()));
    }
  });
});

describe('TypeOrmClaimRegistry without its table', () => {
  const [[, database]] = recordDatabases().filter(([name]) => name === 'sqlite') as [
    [string, ReturnType<typeof recordDatabases>[number][1]],
  ];

  afterAll(() => database.tearDown());

  it('refuses to register, naming the migration', async () => {
    await database.setUp();
    const dataSource = await database.connect();
    await dataSource.query(`DROP TABLE ${dataSource.driver.escape(claimTableName)}`);
    const registry = new TypeOrmClaimRegistry(dataSource);
    const failure = registry.announce({ instance: 'i', claims: [], ttlMs: 1_000 });
    await expect(failure).rejects.toBeInstanceOf(ClaimTableNotMigratedError);
    await expect(failure).rejects.toThrow(/CreateOncelySchema1796256000000/);
  });
});
