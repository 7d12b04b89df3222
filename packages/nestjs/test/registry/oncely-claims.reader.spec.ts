import { Controller, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { OperationClaimConflictError } from '@oncely/core';
import {
  IdempotentKey,
  OncelyClaimsUnreadableError,
  OncelyModule,
  readOncelyClaims,
} from '@oncely/nestjs';
import { ONCELY_RUNTIME } from '../../src/oncely.constants.js';
import type { OncelyRuntime } from '../../src/oncely.runtime.js';
import { AppModule, OrdersController, sideEffects } from './claims-app.fixture.js';

const EXPECTED = [
  {
    operation: 'order-create',
    version: 'v1',
    namespace: 'shop',
    mechanism: 'idempotency',
    owner: '@acme/shop-api',
    route: 'OrdersController.create (POST /orders)',
    description: 'Creates an order from a cart',
    scope: ['user.tenantId'],
    target: [],
    input: ['body'],
    clientKey: 'required',
    shared: false,
    fingerprintBits: 128,
    ttl: { lease: 30_000, retention: 3_600_000, replayCache: 60_000 },
    maxDuration: 300_000,
  },
  {
    operation: 'order-quote',
    version: 'v1',
    namespace: 'shop',
    mechanism: 'single-flight',
    owner: '@acme/shop-api',
    route: 'OrdersController.quote (POST /orders/quote)',
    scope: [],
    target: [],
    input: ['body.cartId'],
    shared: false,
    fingerprintBits: 128,
    ttl: { lease: 30_000, result: 5_000, error: 3_000 },
    maxDuration: 300_000,
  },
  {
    operation: 'ledger-post',
    version: 'v1',
    namespace: 'shop',
    mechanism: 'idempotency',
    owner: '@acme/shop-api',
    route: 'LedgerService.post (provider method)',
    description: 'Posts one ledger entry',
    scope: [],
    target: ['args.0.entryId'],
    input: ['args'],
    clientKey: 'ignored',
    shared: false,
    fingerprintBits: 128,
    ttl: { lease: 30_000, retention: 3_600_000, replayCache: 60_000 },
    maxDuration: 300_000,
  },
];

/** `readOncelyClaims`: an app's claims from its module graph, without starting anything. */
describe('readOncelyClaims', () => {
  beforeEach(() => {
    sideEffects.length = 0;
  });

  it('lists every route and provider method, running no factory, constructor or hook', async () => {
    const { service, claims } = await readOncelyClaims(AppModule);

    expect(service).toBe('@acme/shop-api');
    expect(claims).toEqual(EXPECTED);
    // The factories would connect to 127.0.0.1:1 (PostgreSQL, Redis) and fail or hang.
    expect(sideEffects).toEqual([]);
  });

  it('(control) booting that module runs its factories, failing on the unreachable database', async () => {
    const boot = NestFactory.createApplicationContext(AppModule, {
      logger: false,
      abortOnError: false,
    });

    await expect(boot).rejects.toThrow(/ECONNREFUSED/);
    expect(sideEffects).toContain('DataSource factory');
  });

  it('finds the claims the booted app registers', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        OncelyModule.forRoot({
          namespace: 'shop',
          service: '@acme/shop-api',
          defaults: { retention: 3_600_000 },
        }),
      ],
      controllers: [OrdersController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const booted = app.get<OncelyRuntime>(ONCELY_RUNTIME).claims();
      @Module({
        imports: [
          OncelyModule.forRoot({
            namespace: 'shop',
            service: '@acme/shop-api',
            defaults: { retention: 3_600_000 },
          }),
        ],
        controllers: [OrdersController],
      })
      class RootModule {}

      expect((await readOncelyClaims(RootModule)).claims).toEqual(booted);
      expect(booted).toEqual(EXPECTED.slice(0, 2));
    } finally {
      await app.close();
    }
  });

  it('refuses a factory whose namespace it cannot read, saying where to give it', async () => {
    @Module({
      imports: [OncelyModule.forRootAsync({ useFactory: () => ({ namespace: 'shop' }) })],
    })
    class FactoryOnlyModule {}

    const reading = readOncelyClaims(FactoryOnlyModule);
    await expect(reading).rejects.toBeInstanceOf(OncelyClaimsUnreadableError);
    await expect(reading).rejects.toThrow(
      /^The module graph of FactoryOnlyModule builds OncelyModule's options in a factory, .*forRootAsync\(\{ namespace: 'shop'/,
    );
  });

  it('refuses a module graph without OncelyModule', async () => {
    @Module({ controllers: [OrdersController] })
    class BareModule {}

    await expect(readOncelyClaims(BareModule)).rejects.toThrow(
      'The module graph of BareModule imports no OncelyModule',
    );
  });

  it('fails as the boot does on two routes claiming one operation', async () => {
    @Controller('refunds')
    class RefundsController {
      @Post()
      @IdempotentKey({ operation: 'order-create', scope: 'user.tenantId' })
      create() {
        return {};
      }
    }
    @Module({
      imports: [OncelyModule.forRoot({ namespace: 'shop' })],
      controllers: [OrdersController, RefundsController],
    })
    class ClashingModule {}

    await expect(readOncelyClaims(ClashingModule)).rejects.toBeInstanceOf(
      OperationClaimConflictError,
    );
  });
});
