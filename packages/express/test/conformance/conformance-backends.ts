import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  type EncryptionOptions,
  type FlightCoordinator,
  type IdempotencyRecordStore,
} from '@oncely/core';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';

/** The engines one fixture app runs on, and what was stored for its namespace, as stored. */
export interface ConformanceEngines {
  readonly coordinator: FlightCoordinator;
  readonly store: IdempotencyRecordStore;
  /** The raw stored rows and keys of the namespace, or `undefined` without an outside store. */
  rawStoredText(namespace: string): Promise<string | undefined>;
  /** Frees what these engines alone hold (oncely closes them too; closing twice is harmless). */
  release(): Promise<void>;
}

/** Where the fixture apps of one runner keep their state. Namespaces keep the cases apart. */
export interface ConformanceBackend {
  readonly name: string;
  /** oncely's `encryption` option for the apps on this backend: their data is sealed at rest. */
  readonly encryption?: EncryptionOptions;
  engines(): Promise<ConformanceEngines>;
  stop(): Promise<void>;
}

/** A fresh in-memory coordinator and store per app, as the defaults would give. */
export function inMemoryConformanceBackend(): ConformanceBackend {
  return {
    name: 'in-memory',
    engines: async () => {
      const coordinator = new InMemoryFlightCoordinator();
      return {
        coordinator,
        store: new InMemoryIdempotencyRecordStore(),
        rawStoredText: async () => undefined,
        release: () => coordinator.close(),
      };
    },
    stop: async () => undefined,
  };
}

/**
 * Real Redis (key prefix of this run) and PostgreSQL (records in a schema of this run, dropped at
 * the end), shared by the runner's apps like nodes of one deployment: each app has its own
 * coordinator, which its oncely closes, on the same Redis keys. The raw
 * stored text is read from the rows and keys themselves, not from what oncely meant to write.
 */
export function redisPostgresConformanceBackend(): ConformanceBackend {
  return redisPostgresBackend('Redis + PostgreSQL', undefined);
}

/**
 * The same Redis + PostgreSQL deployment with oncely's encryption at rest (one AES-256 key of
 * this run): what its raw rows and keys hold is what an operator or a leaked backup would see.
 */
export function encryptedRedisPostgresConformanceBackend(): ConformanceBackend {
  return redisPostgresBackend('Redis + PostgreSQL, encrypted at rest', {
    keys: [{ id: 'conformance-k1', secret: randomBytes(32) }],
  });
}

function redisPostgresBackend(
  name: string,
  encryption: EncryptionOptions | undefined,
): ConformanceBackend {
  const schema = `oncely_conformance_${randomBytes(5).toString('hex')}`;
  const keyPrefix = `oncely-conformance:${randomBytes(4).toString('hex')}:`;
  let shared: Promise<{ dataSource: DataSource; redis: Redis }>;

  const open = async () => {
    await requireService('redis');
    await requireService('postgres');
    const { host, port, username, password, database } = services.postgres;
    const base = { type: 'postgres' as const, host, port, username, password, database };
    const admin = await new DataSource(base).initialize();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.destroy();
    const dataSource = await new DataSource(
      withIdempotencyRecords({ ...base, schema, poolSize: 20 }),
    ).initialize();
    await dataSource.runMigrations();
    return { dataSource, redis: new Redis(services.redis) };
  };

  const scan = async (redis: Redis, pattern: string) => {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  };

  const rawText = async (namespace: string) => {
    const { dataSource, redis } = await shared;
    // `t::text` shows the bytea body as hex: the body is added as its bytes, to be read.
    const rows = await dataSource.query<{ row: string; body: Buffer | null }[]>(
      `SELECT t::text AS row, t.response_body AS body FROM "${schema}"."oncely_idempotency_record" t WHERE t::text LIKE $1`,
      [`%${namespace}%`],
    );
    const values: string[] = rows.map(
      ({ row, body }) => `${row} ${body?.toString('latin1') ?? ''}`,
    );
    for (const key of await scan(redis, `${keyPrefix}*${namespace}*`)) {
      const type = await redis.type(key);
      if (type === 'string')
        values.push(`${key} ${(await redis.getBuffer(key))?.toString('latin1')}`);
      else if (type === 'hash') values.push(`${key} ${JSON.stringify(await redis.hgetall(key))}`);
      else values.push(`${key} (${type})`);
    }
    return values.join('\n');
  };

  return {
    name,
    ...(encryption && { encryption }),
    engines: async () => {
      shared ??= open();
      const { dataSource } = await shared;
      const coordinator = new RedisFlightCoordinator({ ...services.redis }, { keyPrefix });
      return {
        coordinator,
        store: new TypeOrmIdempotencyRecordStore(dataSource),
        rawStoredText: rawText,
        release: () => coordinator.close(),
      };
    },
    stop: async () => {
      if (shared === undefined) return;
      const { dataSource, redis } = await shared;
      const keys = await scan(redis, `${keyPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await dataSource.destroy();
    },
  };
}
