import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { oncelyWith } from './fixtures/cli-session.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const run = (...args: string[]) => oncelyWith({ cwd: root }, ...args);

describe('operator command messages', () => {
  it('names the targets a command takes, each with its article, when given another kind', async () => {
    const keys = await run('keys', 'shop:pay:v1:t-1:order-1', '--redis', 'redis://127.0.0.1:1');
    expect(keys.code).toBe(2);
    expect(keys.err).toMatch(
      /^"shop:pay:v1:t-1:order-1" is not an operation \(ns:op:ver, or ns:op for every version\)\.\n/,
    );
    const none = await run('keys', '--redis', 'redis://127.0.0.1:1');
    expect(none.err).toMatch(/^Name an operation \(ns:op:ver, or ns:op for every version\)\.\n/);

    const release = await run('release', 'shop:pay:v1', '--redis', 'redis://127.0.0.1:1');
    expect(release.err).toMatch(
      /^"shop:pay:v1" is not a business key \(ns:op:ver:scope:target:fingerprint\) or an identity \(ns:op:ver:scope:target\)\.\n/,
    );
  });

  it('a database it cannot reach names --database, where, and what was wrong, never the password', async () => {
    const refused = await run(
      'keys',
      'shop:pay:v1',
      '--database',
      'postgres://ops:s3cret@127.0.0.1:1/app',
    );
    expect(refused.code).toBe(2);
    expect(refused.err).toBe(
      'Could not connect to the database at postgres://ops@127.0.0.1:1/app: connect ECONNREFUSED 127.0.0.1:1. Check --database and that the server is reachable.\n',
    );

    const malformed = await run('keys', 'shop:pay:v1', '--database', 'postgres://ops:s3cret@[db');
    expect(malformed.code).toBe(2);
    expect(malformed.err).toMatch(
      /^--database postgres:\/\/ops@\[db is not a valid URL: give postgres:\/\/user@host:port\/database/,
    );
    expect(malformed.err).not.toContain('s3cret');
  });

  it('inspect of a key whose SingleFlight result is cached says the cache answers it, and for how long', async () => {
    await requireService('redis');
    const { host, port } = services.redis;
    const keyPrefix = `cli-msg-${randomBytes(4).toString('hex')}:`;
    const client = new Redis({ host, port });
    const coordinator = new RedisFlightCoordinator(client, { keyPrefix, nearCache: false });
    try {
      const key = 'shop:quote:v1:t-1:monthly:9a8b7c';
      await coordinator.acquire(key, 'owner-token-1', 20_000);
      await coordinator.complete(key, 'owner-token-1', {
        kind: 'result',
        payload: '{"rows":3}',
        ttlMs: 45_000,
      });
      const redis = ['--redis', `redis://${host}:${port}`, '--key-prefix', keyPrefix];

      const cached = await run('inspect', key, ...redis);
      expect(cached.code).toBe(0);
      expect(cached.out).toMatch(
        /\nstate: +absent \(no durable record\); the cached SingleFlight result answers the next request for another 4[45]s\n/,
      );
      expect(cached.out).not.toContain('the next request runs');

      const nothing = await run('inspect', 'shop:quote:v1:t-1:weekly:9a8b7c', ...redis);
      expect(nothing.out).toMatch(/\nstate: +absent \(no live record: the next request runs\)\n/);
    } finally {
      await coordinator.close();
      await client.quit();
    }
  });
});
