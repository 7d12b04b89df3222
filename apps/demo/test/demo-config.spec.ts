import { DEFAULT_SQLITE_FILE, demoConfigFromEnv } from '../src/config/demo-config.js';

describe('demoConfigFromEnv', () => {
  it('defaults to port 3000, the SQLite file under apps/demo/.data and no Redis', () => {
    const config = demoConfigFromEnv({});
    expect(config).toEqual({
      port: 3000,
      database: { kind: 'sqlite', file: DEFAULT_SQLITE_FILE },
      redisKeyPrefix: 'oncely:',
      namespace: 'demo',
    });
    expect(DEFAULT_SQLITE_FILE).toMatch(/apps\/demo\/\.data\/demo\.sqlite$/);
  });

  it('switches the store with DATABASE_URL and the coordinator with REDIS_URL', () => {
    expect(
      demoConfigFromEnv({
        PORT: '4000',
        DATABASE_URL: 'postgres://u@db:5432/shop',
        DATABASE_SCHEMA: 'demo',
        REDIS_URL: 'redis://cache:6379',
        ONCELY_REDIS_PREFIX: 'shop:',
      }),
    ).toEqual({
      port: 4000,
      database: { kind: 'postgres', url: 'postgres://u@db:5432/shop', schema: 'demo' },
      redisUrl: 'redis://cache:6379',
      redisKeyPrefix: 'shop:',
      namespace: 'demo',
    });
    expect(demoConfigFromEnv({ DATABASE_URL: 'mysql://root@db/shop' }).database).toEqual({
      kind: 'mysql',
      url: 'mysql://root@db/shop',
    });
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ DATABASE_URL: 'sqlite://x' }, /DATABASE_URL must start with postgres:\/\/ or mysql:\/\//],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL is not a URL/],
    [{ REDIS_URL: 'http://cache' }, /REDIS_URL/],
  ])('refuses %j naming the variable', (env, message) => {
    expect(() => demoConfigFromEnv(env)).toThrow(message);
  });
});
