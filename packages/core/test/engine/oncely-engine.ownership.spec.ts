import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  OncelyConfigurationError,
  createOncelyEngine,
  type OncelyEngine,
} from '@oncely/core';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';

/**
 * What `close()` ends: the adapters handed to the engine and the defaults it created, each of
 * which ends only what it opened itself. A client or DataSource the app passed to an adapter
 * stays open.
 */
describe('createOncelyEngine ownership', () => {
  const keyPrefix = `oncely-test:engine:${randomUUID().slice(0, 8)}:`;
  let observer: Redis;

  /** Connections named `name` on the test Redis, as CLIENT LIST shows them. */
  const connections = async (name: string) =>
    ((await observer.client('LIST')) as string)
      .split('\n')
      .filter((line) => line.includes(` name=${name} `)).length;

  /** Polls until `name` has `count` connections; a wait for a state, not a timing assertion. */
  const connectionsReach = async (name: string, count: number) => {
    const deadline = Date.now() + 10_000;
    while ((await connections(name)) !== count) {
      if (Date.now() > deadline) {
        throw new Error(`${name}: ${await connections(name)} connections, expected ${count}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  beforeAll(async () => {
    await requireService('redis');
    observer = new Redis(services.redis);
  });

  afterAll(async () => {
    await observer.quit();
  });

  it("closes adapters handed to it, leaving the app's Redis client open", async () => {
    const name = `oncely-app-${randomUUID().slice(0, 8)}`;
    const app = new Redis({ ...services.redis, connectionName: name });
    const coordinator = new RedisFlightCoordinator(app, { keyPrefix });
    const engine = createOncelyEngine({
      namespace: 'shop',
      coordinator,
      store: new RedisIdempotencyRecordStore(app, { keyPrefix }),
    });
    await coordinator.connect();
    // The app's client, and the notice subscribers of the coordinator and of the store's near
    // cache, duplicated from it (the store's connects on its own).
    await connectionsReach(name, 3);

    await engine.close();

    await connectionsReach(name, 1);
    expect(app.status).toBe('ready');
    expect(await app.ping()).toBe('PONG');
    await expect(coordinator.acquire('k', 'o', 1000)).rejects.toMatchObject({
      cause: new Error('this coordinator is closed'),
    });
    await app.quit();
  });

  it('closes the clients of adapters created from a URL', async () => {
    const name = `oncely-url-${randomUUID().slice(0, 8)}`;
    const url = `redis://${services.redis.host}:${services.redis.port}/0?connectionName=${name}`;
    const coordinator = new RedisFlightCoordinator(url, { keyPrefix });
    const engine = createOncelyEngine({
      namespace: 'shop',
      coordinator,
      store: new RedisIdempotencyRecordStore(url, { keyPrefix }),
    });
    await coordinator.connect();
    // The coordinator's client and subscriber, the store's client and its near cache's
    // subscriber (the store's connect on their own).
    await connectionsReach(name, 4);

    await engine.close();

    await connectionsReach(name, 0);
  });

  it('closes the clients of adapters created from options', async () => {
    const name = `oncely-options-${randomUUID().slice(0, 8)}`;
    const options = { ...services.redis, connectionName: name };
    const coordinator = new RedisFlightCoordinator(options, { keyPrefix });
    const engine = createOncelyEngine({
      namespace: 'shop',
      coordinator,
      store: new RedisIdempotencyRecordStore(options, { keyPrefix }),
    });
    await coordinator.connect();
    await connectionsReach(name, 4);

    await engine.close();

    await connectionsReach(name, 0);
  });

  // Handed over, they are oncely's to close; left open, a refused configuration would keep the
  // process alive behind its error.
  it('closes the clients of adapters created from a URL when it refuses an option', async () => {
    const name = `oncely-refused-${randomUUID().slice(0, 8)}`;
    const url = `redis://${services.redis.host}:${services.redis.port}/0?connectionName=${name}`;
    const coordinator = new RedisFlightCoordinator(url, { keyPrefix });
    const store = new RedisIdempotencyRecordStore(url, { keyPrefix });
    await coordinator.connect();
    await connectionsReach(name, 4);

    expect(() =>
      createOncelyEngine({ namespace: 'shop', coordinator, store, bootTimeout: 0 }),
    ).toThrow(
      new OncelyConfigurationError(
        'createOncelyEngine() option "bootTimeout" must be a positive integer (default 1000), got 0.',
      ),
    );

    await connectionsReach(name, 0);
  });

  it('never destroys the DataSource handed to the TypeORM store; stops its purge schedule', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'oncely-ownership-'));
    const dataSource = await new DataSource(
      withIdempotencyRecords({
        type: 'better-sqlite3',
        database: join(directory, 'records.sqlite'),
        migrationsRun: true,
      }),
    ).initialize();
    try {
      const store = new TypeOrmIdempotencyRecordStore(dataSource, {
        purge: { every: 10, batch: 100 },
      });
      let purges = 0;
      const purgeExpired = store.purgeExpired.bind(store);
      store.purgeExpired = (batchSize) => {
        purges += 1;
        return purgeExpired(batchSize);
      };
      const engine = createOncelyEngine({ namespace: 'shop', store });
      await engine.start();
      while (purges === 0) await new Promise((resolve) => setTimeout(resolve, 10));

      await engine.close();

      expect(dataSource.isInitialized).toBe(true);
      expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      const purgesAtClose = purges;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(purges).toBe(purgesAtClose);
    } finally {
      await dataSource.destroy();
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('closes what it owns when the store refuses to start, and rethrows', async () => {
    const refusal = new OncelyConfigurationError('the record table is missing');
    let closed = 0;
    class RefusingStore extends InMemoryIdempotencyRecordStore {
      start(): Promise<void> {
        return Promise.reject(refusal);
      }
      async close(): Promise<void> {
        closed += 1;
      }
    }
    const engine = createOncelyEngine({ namespace: 'shop', store: new RefusingStore() });
    const waiting = engine.coordinator.waitForNotice('k', 60_000);

    await expect(engine.start()).rejects.toBe(refusal);

    expect(closed).toBe(1);
    await expect(waiting).resolves.toBeUndefined();
    await expect(engine.start()).rejects.toBe(refusal);
    await engine.close();
    expect(closed).toBe(1);
  });

  it('closes the in-memory coordinator it created; closing again is harmless', async () => {
    const engine: OncelyEngine = createOncelyEngine({ namespace: 'shop' });
    expect(engine.coordinator).toBeInstanceOf(InMemoryFlightCoordinator);
    expect((await engine.coordinator.acquire('k', 'leader', 60_000)).kind).toBe('leader');
    const waiting = engine.coordinator.waitForNotice('k', 60_000);

    await Promise.all([engine.close(), engine.close()]);

    // Closing wakes every pending wait: nothing is left to hold the process open.
    await expect(waiting).resolves.toBeUndefined();
    expect((engine.coordinator as InMemoryFlightCoordinator).waitingKeys).toBe(0);
  });
});
