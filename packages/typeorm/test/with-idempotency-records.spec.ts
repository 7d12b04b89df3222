import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import {
  UnsupportedDatabaseError,
  idempotencyRecordMigrations,
  withIdempotencyRecords,
} from '@oncely/typeorm';
import { EntitySchema, type DataSourceOptions } from 'typeorm';

class Order {}

/**
 * Also a compile-time test (`npm run typecheck`): `TypeOrmModuleOptions` comes from
 * `@nestjs/typeorm` here only, the package itself does not depend on it.
 */
describe('withIdempotencyRecords', () => {
  it('takes and returns what a TypeOrmModule.forRootAsync factory returns', () => {
    const options: TypeOrmModuleOptions = {
      type: 'postgres',
      url: 'postgres://localhost/shop',
      autoLoadEntities: true,
      retryAttempts: 3,
      entities: [Order],
    };
    const useFactory = (): TypeOrmModuleOptions => withIdempotencyRecords(options);

    const extended = useFactory();

    expect(extended).toMatchObject({ autoLoadEntities: true, retryAttempts: 3 });
    expect(extended.entities).toEqual([Order, expect.any(EntitySchema)]);
    expect(extended.migrations).toEqual(idempotencyRecordMigrations);
  });

  it('takes and returns DataSourceOptions, keeping the entities and migrations listed', () => {
    class CreateOrders1767312000000 {}
    const options: DataSourceOptions = {
      type: 'better-sqlite3',
      database: ':memory:',
      entities: { Order },
      migrations: [CreateOrders1767312000000],
    };

    const extended: DataSourceOptions = withIdempotencyRecords(options);

    expect(extended.entities).toEqual([Order, expect.any(EntitySchema)]);
    expect(extended.migrations).toEqual([
      CreateOrders1767312000000,
      ...idempotencyRecordMigrations,
    ]);
  });

  it('refuses options without a database type, which decides the column types', () => {
    const withoutType: TypeOrmModuleOptions = { autoLoadEntities: true };
    expect(() => withIdempotencyRecords(withoutType)).toThrow(UnsupportedDatabaseError);
    // @ts-expect-error a number is no database type
    expect(() => withIdempotencyRecords({ type: 42 })).toThrow(UnsupportedDatabaseError);
  });
});
