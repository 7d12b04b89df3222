import {
  InMemoryIdempotencyRecordStore,
  OperationClaimConflictError,
  PreviousVersionClaimedError,
  ReplayHeaderPolicyError,
  RouteOptionsError,
  TransactionalStoreRequiredError,
} from '@oncely/core';
import { createOncely, OncelyConfigurationError, type Oncely } from '@oncely/express';
import {
  RecordTableNotMigratedError,
  TypeOrmIdempotencyRecordStore,
  withIdempotencyRecords,
} from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { uniqueNamespace } from './fixtures/backends.js';

describe('createOncely() and middleware creation', () => {
  const created: Oncely[] = [];
  const oncely = (options: Partial<Parameters<typeof createOncely>[0]> = {}) => {
    const instance = createOncely({ namespace: uniqueNamespace(), ...options });
    created.push(instance);
    return instance;
  };

  afterAll(async () => {
    await Promise.all(created.map((instance) => instance.close()));
  });

  it('refuses a missing or malformed namespace', () => {
    expect(() => createOncely({} as never)).toThrow(OncelyConfigurationError);
    expect(() => createOncely({ namespace: 'a:b' })).toThrow(/option "namespace"/);
  });

  it('refuses an option it does not read, naming the one meant', () => {
    expect(() => oncely({ servce: 'shop-api' } as never)).toThrow(
      'createOncely() has no option "servce": did you mean "service"? Its options are namespace, service,',
    );
    expect(() => oncely({ keyContext: () => ({}) } as never)).toThrow(
      'createOncely() has no option "keyContext". Its options are',
    );
    expect(() => oncely({ resolveUser: () => undefined })).not.toThrow();
  });

  it('refuses unknown and invalid defaults, naming them', () => {
    expect(() => oncely({ defaults: { leaseTTL: 5 } as never })).toThrow(/defaults\.leaseTTL/);
    expect(() => oncely({ defaults: { wait: -1 } })).toThrow(/defaults\.wait/);
    expect(() => oncely({ defaults: { replayHeaders: ['set-cookie'] } })).toThrow(
      ReplayHeaderPolicyError,
    );
  });

  it('takes serviceAliases beside the service, checked like the Nest module’s', () => {
    expect(() => oncely({ service: 'shop-api', serviceAliases: 'shop' as never })).toThrow(
      /^createOncely\(\) option "serviceAliases" must be an array of service names, got "shop"\./,
    );
    expect(() => oncely({ service: 'shop-api', serviceAliases: ['shop', 'shop api'] })).toThrow(
      /^createOncely\(\) option "serviceAliases" has "shop api" at index 1, which is not a service name/,
    );
    expect(oncely({ service: 'shop-api', serviceAliases: ['shop'] }).serviceAliases).toEqual([
      'shop',
    ]);
  });

  it('takes a service name, checks it, and lists the claims of the middleware created', () => {
    expect(() => oncely({ service: 'shop api' })).toThrow(
      /^createOncely\(\) option "service" must name the service/,
    );
    const instance = oncely({ namespace: 'shop', service: 'shop-api' });
    instance.idempotent({
      name: 'POST /orders',
      operation: 'order-create',
      scope: 'user.tenantId',
      description: 'Creates an order',
    });
    instance.singleFlight({ name: 'GET /quotes', operation: 'quote', resultTtl: 1_000 });

    expect(instance.service).toBe('shop-api');
    expect(instance.claims()).toEqual([
      expect.objectContaining({
        operation: 'order-create',
        mechanism: 'idempotency',
        owner: 'shop-api',
        route: 'POST /orders',
        description: 'Creates an order',
      }),
      expect.objectContaining({
        operation: 'quote',
        mechanism: 'single-flight',
        route: 'GET /quotes',
        ttl: { lease: 30_000, result: 1_000, error: 3_000 },
      }),
    ]);
  });

  it('refuses a coordinator or store that is not one', () => {
    expect(() => oncely({ coordinator: {} as never })).toThrow(/option "coordinator"/);
    expect(() => oncely({ store: { begin: 1 } as never })).toThrow(/option "store"/);
  });

  it('start() refuses a record table that was never migrated, and leaves the DataSource open', async () => {
    const dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
    }).initialize();
    try {
      const instance = oncely({ store: new TypeOrmIdempotencyRecordStore(dataSource) });
      await expect(instance.start()).rejects.toBeInstanceOf(RecordTableNotMigratedError);
      expect(dataSource.isInitialized).toBe(true);
    } finally {
      await dataSource.destroy();
    }
  });

  it('start() passes on a migrated table', async () => {
    const dataSource = await new DataSource(
      withIdempotencyRecords({ type: 'better-sqlite3', database: ':memory:', migrationsRun: true }),
    ).initialize();
    try {
      await expect(
        oncely({ store: new TypeOrmIdempotencyRecordStore(dataSource) }).start(),
      ).resolves.toBeUndefined();
    } finally {
      await dataSource.destroy();
    }
  });

  it('refuses the in-memory defaults in production unless allowed', () => {
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      expect(() => oncely()).toThrow(/refuses to start in production.*coordinator.*store/);
      expect(() => oncely({ allowInMemory: true })).not.toThrow();
    } finally {
      process.env.NODE_ENV = previous;
    }
  });

  it('validates a middleware when it is created, naming the route and the option', () => {
    const instance = oncely();
    expect(() =>
      instance.idempotent({
        name: 'POST /pay',
        operation: 'pay',
        scope: 'user.id',
        onBusy: 'later' as never,
      }),
    ).toThrow(/"onBusy" on POST \/pay/);
    expect(() =>
      instance.singleFlight({ name: 'GET /r', operation: 'r', resultTTL: 5 } as never),
    ).toThrow(RouteOptionsError);
    expect(() => instance.idempotent({ name: 'POST /x', operation: 'x' })).toThrow(/"scope"/);
    expect(() =>
      instance.idempotent({ operation: 'y', scope: 'user.id', validate: 'yes' as never }),
    ).toThrow(/"validate"/);
    expect(() =>
      instance.idempotent({ operation: 'z', scope: 'user.id', replayHeaders: ['content-length'] }),
    ).toThrow(ReplayHeaderPolicyError);
    expect(() =>
      instance.idempotent({
        name: 'POST /refunds',
        operation: 'refund',
        scope: 'user.id',
        version: 'v2',
        previousVersions: ['v1', 'v1'],
      }),
    ).toThrow(/"previousVersions" on POST \/refunds: "v1" is listed twice/);
  });

  it("lists a route's previous versions in the registry, and refuses one another route claims", () => {
    const instance = oncely();
    instance.idempotent({
      name: 'POST /v2/refunds',
      operation: 'refund',
      scope: 'user.id',
      version: 'v2',
      previousVersions: ['v1'],
    });
    expect(instance.registry.list()).toEqual([
      expect.objectContaining({
        route: 'POST /v2/refunds',
        operation: expect.stringMatching(/:refund:v2$/),
        previousVersions: [expect.stringMatching(/:refund:v1$/)],
      }),
    ]);
    const old = () =>
      instance.idempotent({ name: 'POST /v1/refunds', operation: 'refund', scope: 'user.id' });
    expect(old).toThrow(PreviousVersionClaimedError);
    expect(old).toThrow(/POST \/v2\/refunds lists .* but POST \/v1\/refunds still claims it/);
  });

  it('fails when two routes claim one operation with identical options, naming both', () => {
    const instance = oncely();
    instance.idempotent({ name: 'POST /orders', operation: 'order-create', scope: 'user.id' });
    const conflict = () =>
      instance.idempotent({ name: 'POST /quotes', operation: 'order-create', scope: 'user.id' });
    expect(conflict).toThrow(OperationClaimConflictError);
    expect(conflict).toThrow(/POST \/orders and POST \/quotes/);
    instance.singleFlight({ name: 'POST /reports', operation: 'report', target: 'body.id' });
    expect(() =>
      instance.singleFlight({
        name: 'POST /reports-v2',
        operation: 'report',
        target: 'body.id',
        shared: true,
      }),
    ).toThrow(/POST \/reports and POST \/reports-v2/);
    expect(() =>
      instance.idempotent({ operation: 'x', scope: 'user.id', shared: 'yes' as never }),
    ).toThrow(/"shared"/);
    expect(() => instance.singleFlight({ operation: 'x', shared: 1 as never })).toThrow(/"shared"/);
  });

  it('fails when two routes claim one operation with different key shapes, naming both', () => {
    const instance = oncely();
    instance.idempotent({ name: 'POST /v1/pay', operation: 'pay', scope: 'user.id' });
    const conflict = () =>
      instance.idempotent({ name: 'POST /v2/pay', operation: 'pay', scope: 'user.tenantId' });
    expect(conflict).toThrow(OperationClaimConflictError);
    expect(conflict).toThrow(/POST \/v1\/pay and POST \/v2\/pay/);
    instance.idempotent({
      name: 'POST /v3/pay',
      operation: 'pay-3',
      scope: 'user.id',
      shared: true,
    });
    instance.idempotent({
      name: 'POST /v4/pay',
      operation: 'pay-3',
      scope: 'user.org',
      shared: true,
    });
  });

  it('refuses a transactional route on a store without transactions', () => {
    const instance = oncely({ store: new InMemoryIdempotencyRecordStore() });
    expect(() =>
      instance.idempotent({
        name: 'POST /tx',
        operation: 'tx',
        scope: 'user.id',
        transactional: true,
      }),
    ).toThrow(TransactionalStoreRequiredError);
  });
});
