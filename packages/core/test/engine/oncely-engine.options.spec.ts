import { randomBytes } from 'node:crypto';
import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  InMemoryRecordQuota,
  OncelyConfigurationError,
  createOncelyEngine,
  type OncelyEngine,
  type OncelyEngineOptions,
} from '@oncely/core';
import { requireFunction } from '@oncely/core/adapter';
import { EncryptedFlightCoordinator } from '../../src/security/encrypted-flight.coordinator.js';
import { QuotaLimitedIdempotencyRecordStore } from '../../src/security/quota-limited-idempotency-record.store.js';

describe('createOncelyEngine options', () => {
  const created: OncelyEngine[] = [];
  const engine = (options: Partial<OncelyEngineOptions>) => {
    const built = createOncelyEngine({ namespace: 'shop', owner: 'OncelyModule', ...options });
    created.push(built);
    return built;
  };
  /** The message `options` are refused with, asserting the error type. */
  const refusal = (options: unknown): string => {
    try {
      created.push(createOncelyEngine(options as OncelyEngineOptions));
    } catch (error) {
      expect(error).toBeInstanceOf(OncelyConfigurationError);
      return (error as Error).message;
    }
    throw new Error('the options were accepted');
  };

  afterEach(async () => {
    await Promise.all(created.splice(0).map((built) => built.close()));
  });

  it('refuses a missing options object or namespace, naming the entry point', () => {
    expect(refusal(undefined)).toBe(
      'createOncelyEngine() needs an options object with at least a namespace.',
    );
    expect(refusal({ owner: 'createOncely()' })).toMatch(
      /^createOncely\(\) option "namespace" must be a name such as "shop" .*got undefined\.$/,
    );
    expect(refusal({ namespace: 'has space', owner: 'OncelyModule' })).toMatch(
      /^OncelyModule option "namespace" .*got "has space"\.$/,
    );
  });

  it('refuses an option it does not read, naming the entry point and the option meant', () => {
    expect(refusal({ namespace: 'shop', servce: 'shop-api', owner: 'createOncely()' })).toBe(
      'createOncely() has no option "servce": did you mean "service"? Its options are namespace, service, serviceAliases, coordinator, store, allowInMemory, defaults, events, tracing, onForeignClaim, claims, encryption, recordQuota, logger, bootTimeout.',
    );
    expect(refusal({ Namespace: 'shop' })).toMatch(
      /^createOncelyEngine\(\) has no option "Namespace": did you mean "namespace"\?/,
    );
    expect(refusal({ namespace: 'shop', redis: 'redis://127.0.0.1' })).toMatch(
      /^createOncelyEngine\(\) has no option "redis"\. Its options are /,
    );
  });

  it('refuses unknown and invalid defaults, naming them', () => {
    expect(refusal({ namespace: 'shop', defaults: { leaseTTL: 5 } })).toMatch(
      /option "defaults\.leaseTTL" is unknown\. Known defaults: .*leaseTtl/,
    );
    expect(refusal({ namespace: 'shop', defaults: { wait: -1 } })).toMatch(
      /option "defaults\.wait" must be a non-negative integer .*got -1\./,
    );
    expect(refusal({ namespace: 'shop', defaults: { maxDuration: 0 } })).toMatch(
      /option "defaults\.maxDuration" must be a whole number of milliseconds from 1/,
    );
  });

  it('refuses a Redis client, { redis } or a DataSource where an adapter instance belongs', () => {
    const redisLike = {
      defineCommand: () => undefined,
      duplicate: () => undefined,
      status: 'ready',
    };
    for (const coordinator of [redisLike, { redis: redisLike }, 'redis://localhost:6379']) {
      expect(refusal({ namespace: 'shop', owner: 'OncelyModule', coordinator })).toBe(
        'OncelyModule option "coordinator" must be a FlightCoordinator instance, e.g. new RedisFlightCoordinator(redis) from @oncely/redis, or left out for the in-memory one. A Redis client or { redis } is not one: wrap it in new RedisFlightCoordinator(...).',
      );
    }
    const dataSourceLike = { createQueryRunner: () => undefined, transaction: () => undefined };
    for (const store of [dataSourceLike, redisLike, { redis: redisLike }]) {
      expect(refusal({ namespace: 'shop', owner: 'OncelyModule', store })).toMatch(
        /^OncelyModule option "store" must be an IdempotencyRecordStore instance, e.g. new TypeOrmIdempotencyRecordStore\(dataSource\) .* A DataSource or a Redis client is not one: wrap it\.$/,
      );
    }
  });

  it('refuses events that are not functions and malformed security options', () => {
    expect(refusal({ namespace: 'shop', events: [() => undefined, 'log'] })).toBe(
      'createOncelyEngine() option "events" must be a function or an array of functions.',
    );
    expect(refusal({ namespace: 'shop', encryption: 'secret' })).toBe(
      'createOncelyEngine() option "encryption" must be { keys: [...] }.',
    );
    expect(refusal({ namespace: 'shop', recordQuota: { limit: 5, windowMs: 1000 } })).toMatch(
      /^createOncelyEngine\(\) option "recordQuota" must be \{ quota, limit, windowMs \}/,
    );
  });

  describe('in production', () => {
    const previous = process.env.NODE_ENV;
    beforeEach(() => (process.env.NODE_ENV = 'production'));
    afterEach(() => (process.env.NODE_ENV = previous));

    it('refuses the in-memory defaults, naming each missing adapter, unless allowed', () => {
      expect(refusal({ namespace: 'shop', owner: 'createOncely()' })).toBe(
        'createOncely() refuses to start in production on in-memory defaults: they protect one process only and lose every record on restart. Register coordinator (e.g. new RedisFlightCoordinator(redis) from @oncely/redis) and store (e.g. new TypeOrmIdempotencyRecordStore(dataSource) from @oncely/typeorm), or set allowInMemory: true if this really is a single-process app.',
      );
      expect(refusal({ namespace: 'shop', coordinator: new InMemoryFlightCoordinator() })).toMatch(
        /Register store \(e\.g\. new TypeOrmIdempotencyRecordStore/,
      );
      expect(engine({ allowInMemory: true }).defaults.namespace).toBe('shop');
      expect(
        engine({
          coordinator: new InMemoryFlightCoordinator(),
          store: new InMemoryIdempotencyRecordStore(),
        }).owner,
      ).toBe('OncelyModule');
    });
  });

  it('resolves the defaults and applies the security options to what the executor uses', () => {
    const store = new InMemoryIdempotencyRecordStore();
    const built = engine({
      store,
      defaults: { wait: 250 },
      encryption: { keys: [{ id: 'k1', secret: randomBytes(32) }] },
      recordQuota: { quota: new InMemoryRecordQuota(), limit: 5, windowMs: 60_000 },
    });
    expect(built.defaults).toMatchObject({ namespace: 'shop', wait: 250 });
    expect(built.store).not.toBe(store);
    expect(built.store).toBeInstanceOf(QuotaLimitedIdempotencyRecordStore);
    expect(built.coordinator).toBeInstanceOf(EncryptedFlightCoordinator);
    expect(built.supportsTransactions).toBe(false);
  });

  it('requireFunction words a framework option like the engine does', () => {
    expect(() =>
      requireFunction('createOncely()', 'resolveUser', undefined, '(req) => user'),
    ).not.toThrow();
    expect(() =>
      requireFunction('createOncely()', 'resolveUser', () => 1, '(req) => user'),
    ).not.toThrow();
    expect(() =>
      requireFunction('OncelyModule', 'keyContext', { user: 1 }, '(context, base) => KeyContext'),
    ).toThrow(
      new OncelyConfigurationError(
        'OncelyModule option "keyContext" must be a function (context, base) => KeyContext, got an object.',
      ),
    );
  });
});
