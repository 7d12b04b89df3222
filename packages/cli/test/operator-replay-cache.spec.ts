import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createOncely, type Oncely } from '@oncely/express';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import express from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { oncelyWith } from './fixtures/cli-session.js';
import { createRecordSchema, type RecordSchema } from './fixtures/record-schema.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** An app on the schema's records: one idempotent route counting its runs per key. */
function paymentsApp(oncely: Oncely) {
  const app = express();
  app.use(express.json());
  const runs = new Map<string, number>();
  app.post(
    '/payments',
    oncely.idempotent({ operation: 'pay', scope: 'headers.x-tenant' }),
    (req, res) => {
      const key = req.get('idempotency-key')!;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      res.status(201).json({ run: runs.get(key) });
    },
  );
  return { app, runs: (key: string) => runs.get(key) ?? 0 };
}

/**
 * `purge` and `release` in front of a real app on PostgreSQL records: the idempotency guard
 * caches the replay in the coordinator, in Redis or in the app's memory, and the commands must
 * free that layer too or say they cannot.
 */
describe('oncely purge and release in front of an app whose guard caches replays', () => {
  const namespace = `cli${randomBytes(3).toString('hex')}`;
  const keyPrefix = `cli-replay-${randomBytes(4).toString('hex')}:`;
  let schema: RecordSchema;
  let redis: Redis;
  let coordinator: RedisFlightCoordinator;
  let onRedis: Oncely;
  let inProcess: Oncely;
  let redisApp: ReturnType<typeof paymentsApp>;
  let memoryApp: ReturnType<typeof paymentsApp>;
  const cli = (...args: string[]) => oncelyWith({ cwd: root }, ...args, '--database', schema.url);
  const redisFlags = () => [
    '--redis',
    `redis://${services.redis.host}:${services.redis.port}`,
    '--key-prefix',
    keyPrefix,
  ];
  const pay = (target: ReturnType<typeof paymentsApp>, key: string) =>
    request(target.app)
      .post('/payments')
      .set('x-tenant', 't-1')
      .set('idempotency-key', key)
      .send({});
  const identityOf = (operation: string, key: string) => `${namespace}:${operation}:v1:t-1:${key}`;

  beforeAll(async () => {
    await requireService('redis');
    schema = await createRecordSchema();
    redis = new Redis(services.redis.port, services.redis.host);
    coordinator = new RedisFlightCoordinator(redis, { keyPrefix });
    const store = new TypeOrmIdempotencyRecordStore(schema.dataSource);
    onRedis = createOncely({ namespace, coordinator, store });
    redisApp = paymentsApp(onRedis);
    // Another app on the same records, its coordinator in its own memory.
    inProcess = createOncely({ namespace: `${namespace}m`, store });
    memoryApp = paymentsApp(inProcess);
  });

  afterAll(async () => {
    await onRedis?.close();
    await inProcess?.close();
    await redis?.quit();
    await schema?.drop();
  });

  it('purge with --database alone is refused naming --redis and --no-redis, and deletes nothing', async () => {
    const key = randomUUID();
    expect((await pay(redisApp, key)).status).toBe(201);
    const replay = await pay(redisApp, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(redisApp.runs(key)).toBe(1);
    const identity = identityOf('pay', key);
    expect((await cli('inspect', identity, '--json')).out).toContain('"state": "completed"');

    const refused = await cli('purge', identity, '--yes');
    expect(refused.code).toBe(2);
    expect(refused.out).toBe('');
    expect(refused.err).toMatch(
      /^Refused: with --database alone the app's coordinator is unknown, and a Redis coordinator would keep its cached replay for the next request\. Add --redis <url> of the app's coordinator to free it too, or --no-redis if the app has no Redis coordinator\.\n/,
    );
    expect((await cli('inspect', identity, '--json')).out).toContain('"state": "completed"');
    expect((await pay(redisApp, key)).body).toEqual({ run: 1 });
    expect(redisApp.runs(key)).toBe(1);

    const contradiction = await cli('purge', identity, '--yes', '--no-redis', ...redisFlags());
    expect(contradiction.code).toBe(2);
    expect(contradiction.err).toMatch(/^Give either --redis \(or ONCELY_REDIS_URL\) or --no-redis/);
  });

  it('purge with --database and --redis frees the record and the cached replay: the next request runs again', async () => {
    const key = randomUUID();
    await pay(redisApp, key);
    expect((await pay(redisApp, key)).headers['idempotent-replayed']).toBe('true');
    expect(redisApp.runs(key)).toBe(1);
    const identity = identityOf('pay', key);

    const purged = await cli('purge', identity, '--yes', ...redisFlags());
    expect(purged).toEqual({
      code: 0,
      out: `Deleted 1 record and 1 cached replay or SingleFlight outcome of ${identity}: the next request runs again.\n`,
      err: '',
    });
    const again = await pay(redisApp, key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body).toEqual({ run: 2 });
    expect(redisApp.runs(key)).toBe(2);
  });

  it('--no-redis is accepted and says the in-process replay cache is out of reach, which it is', async () => {
    const key = randomUUID();
    await pay(memoryApp, key);
    await pay(memoryApp, key);
    expect(memoryApp.runs(key)).toBe(1);
    const identity = identityOf('pay', key).replace(namespace, `${namespace}m`);

    const purged = await cli('purge', identity, '--yes', '--no-redis', '--json');
    expect(purged.code).toBe(0);
    expect(JSON.parse(purged.out)).toEqual({
      target: 'identity',
      name: identity,
      records: 1,
      flights: null,
    });
    expect((await cli('inspect', identity, '--json')).out).toContain('"state": "absent"');
    // The app's own coordinator still holds the replay, as the command said it might.
    expect((await pay(memoryApp, key)).body).toEqual({ run: 1 });
    expect(memoryApp.runs(key)).toBe(1);

    const text = await cli('purge', identityOf('pay', randomUUID()), '--yes', '--no-redis');
    expect(text.out).toMatch(
      /^Deleted 0 records of \S+\. The app's in-process coordinator is out of reach: it may still replay for up to its replayCacheTtl \(60 s by default\), or until the app restarts\.\n$/,
    );
  });

  it('release with --database alone is refused naming the flags; with --redis it frees the guard lease', async () => {
    const identity = identityOf('stuck', randomUUID());
    const refused = await cli('release', identity, '--yes');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      /^Refused: with --database alone the app's coordinator is unknown, and a Redis coordinator would keep its guard lease for the next request\. Add --redis <url>.* or --no-redis /,
    );

    // A guard lease left by a handler that is gone: the record and the lease both held.
    const lease = await coordinator.acquire(`${identity}:idem`, 'gone-handler', 60_000);
    expect(lease.kind).toBe('leader');
    const released = await cli('release', identity, '--yes', '--json', ...redisFlags());
    expect(JSON.parse(released.out)).toEqual({
      target: 'identity',
      identity,
      record: 'absent',
      fence: null,
      leases: ['guard'],
    });
    expect((await coordinator.acquire(`${identity}:idem`, 'next', 1_000)).kind).toBe('leader');
    await coordinator.release(`${identity}:idem`, 'next');

    const inProcessRelease = await cli('release', identity, '--yes', '--no-redis');
    expect(inProcessRelease.out).toBe(
      `${identity} has no record in progress; the app's in-process coordinator is out of reach: a retry may meet 409 while the old handler still runs there.\n`,
    );
  });
});
