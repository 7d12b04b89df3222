import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  type FlightCoordinator,
  type IdempotencyRecordStore,
} from '@oncely/core';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';

/** The state a hostile-input suite runs on, and how it counts what was written there. */
export interface HostileBackend {
  readonly name: string;
  readonly coordinator: FlightCoordinator;
  readonly store: IdempotencyRecordStore;
  /** Durable records written so far (expired ones included). */
  records(): Promise<number>;
  /** Encryption at rest on this backend, to run the whole suite through it too. */
  readonly encryption?: { keys: { id: string; secret: Buffer }[] };
  stop(): Promise<void>;
}

export function inMemoryHostileBackend(): () => Promise<HostileBackend> {
  return async () => {
    const store = new InMemoryIdempotencyRecordStore();
    const coordinator = new InMemoryFlightCoordinator();
    return {
      name: 'in-memory',
      coordinator,
      store,
      records: async () => store.size,
      stop: () => coordinator.close(),
    };
  };
}

/** Redis coordinator + PostgreSQL records in a schema of this run only, encrypted at rest. */
export function redisPostgresHostileBackend(): () => Promise<HostileBackend> {
  return async () => {
    await requireService('redis');
    await requireService('postgres');
    const schema = `oncely_hostile_${randomBytes(5).toString('hex')}`;
    const { host, port, username, password, database } = services.postgres;
    const base = { type: 'postgres' as const, host, port, username, password, database };
    const admin = await new DataSource(base).initialize();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    const dataSource = await new DataSource(
      withIdempotencyRecords({ ...base, schema, poolSize: 10 }),
    ).initialize();
    await dataSource.runMigrations();
    const redis = new Redis(services.redis);
    const keyPrefix = `oncely-test:hostile:${randomBytes(4).toString('hex')}:`;
    const coordinator = new RedisFlightCoordinator(redis, { keyPrefix });
    return {
      name: 'redis+postgres (encrypted)',
      coordinator,
      store: new TypeOrmIdempotencyRecordStore(dataSource),
      encryption: { keys: [{ id: 'k1', secret: randomBytes(32) }] },
      records: async () => {
        const [row] = await dataSource.query<{ n: string }[]>(
          `SELECT COUNT(*) AS n FROM "${schema}"."oncely_idempotency_record"`,
        );
        return Number(row!.n);
      },
      stop: async () => {
        await coordinator.close();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
        redis.disconnect();
        await dataSource.destroy();
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.destroy();
      },
    };
  };
}
