import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { DataSource } from 'typeorm';

describe('what the TypeORM store tells the start-up line', () => {
  const describeStore = (options: ConstructorParameters<typeof DataSource>[0]) =>
    new TypeOrmIdempotencyRecordStore(new DataSource(options)).describe();

  it('names the database, host, port and table, never the password', () => {
    expect(
      describeStore({
        type: 'postgres',
        host: 'db.internal',
        port: 5432,
        username: 'shop',
        password: 'hunter2',
        database: 'shop',
      }),
    ).toBe('TypeORM postgres db.internal:5432/shop (table oncely_idempotency_record)');
    expect(
      describeStore({ type: 'postgres', url: 'postgres://shop:hunter2@db.internal:6432/orders' }),
    ).toBe('TypeORM postgres db.internal:6432/orders (table oncely_idempotency_record)');
    expect(describeStore({ type: 'mysql', host: 'maria', database: 'shop', password: 'x' })).toBe(
      'TypeORM mysql maria/shop (table oncely_idempotency_record)',
    );
  });

  it('names the file of SQLite', () => {
    expect(describeStore({ type: 'better-sqlite3', database: ':memory:' })).toBe(
      'TypeORM better-sqlite3 :memory: (table oncely_idempotency_record)',
    );
  });
});
