import {
  Body,
  Controller,
  Get,
  Injectable,
  Module,
  Post,
  StreamableFile,
  type ConfigurableModuleOptionsFactory,
  type INestApplication,
} from '@nestjs/common';
import {
  IdempotencyManager,
  IdempotentKey,
  OncelyModule,
  SingleFlight,
  type OncelyModuleOptions,
} from '@oncely/nestjs';
import {
  CoordinatorUnavailableError,
  OncelyConfigurationError,
  OperationClaimConflictError,
  PreviousVersionClaimedError,
  ReplayHeaderPolicyError,
  RouteOptionsError,
  TransactionalStoreRequiredError,
  UnsupportedResponseError,
  createPrometheusListener,
  type OncelyEvent,
} from '@oncely/core';
import { Test } from '@nestjs/testing';
import { RedisFlightCoordinator } from '@oncely/redis';
import { RecordTableNotMigratedError, TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { IsString } from 'class-validator';
import * as promClient from 'prom-client';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Readable } from 'node:stream';
import { createTestApp, uniqueNamespace } from './fixtures/test-app.js';

async function boot(
  controllers: any[],
  options: Record<string, unknown> = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRoot({ namespace: uniqueNamespace(), ...options })],
    controllers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('start-up checks', () => {
  it('fails the boot on two routes claiming one operation with different key shapes, naming both', async () => {
    @Controller('a')
    class FirstController {
      @Post()
      @IdempotentKey({ operation: 'refund', scope: 'user.tenantId' })
      create() {
        return {};
      }
    }
    @Controller('b')
    class SecondController {
      @Post()
      @IdempotentKey({ operation: 'refund', scope: 'user.tenantId', target: 'body.orderId' })
      create() {
        return {};
      }
    }
    const failure = boot([FirstController, SecondController]);
    await expect(failure).rejects.toBeInstanceOf(OperationClaimConflictError);
    await expect(failure).rejects.toThrow(
      /FirstController\.create \(POST \/a\).*SecondController\.create \(POST \/b\)/,
    );
  });

  it('fails the boot on a route listing a previous version another route still claims, naming both', async () => {
    @Controller('v1/refunds')
    class OldRefundsController {
      @Post()
      @IdempotentKey({ operation: 'refund', scope: 'user.tenantId' })
      create() {
        return {};
      }
    }
    @Controller('v2/refunds')
    class NewRefundsController {
      @Post()
      @IdempotentKey({
        operation: 'refund',
        scope: 'user.tenantId',
        version: 'v2',
        previousVersions: ['v1'],
      })
      create() {
        return {};
      }
    }
    const failure = boot([OldRefundsController, NewRefundsController]);
    await expect(failure).rejects.toBeInstanceOf(PreviousVersionClaimedError);
    await expect(failure).rejects.toThrow(
      /NewRefundsController\.create \(POST \/v2\/refunds\) lists the version of ".*:refund:v1" in previousVersions, but OldRefundsController\.create \(POST \/v1\/refunds\) still claims it/,
    );
  });

  it('fails the boot on two routes claiming one operation with identical options, naming both', async () => {
    @Controller('orders')
    class OrdersController {
      @Post()
      @IdempotentKey({ operation: 'order-create', scope: 'user.tenantId' })
      create() {
        return { id: 'order-1' };
      }
    }
    @Controller('quotes')
    class QuotesController {
      @Post()
      @IdempotentKey({ operation: 'order-create', scope: 'user.tenantId' })
      create() {
        return { quote: 12 };
      }
    }
    const failure = boot([OrdersController, QuotesController]);
    await expect(failure).rejects.toBeInstanceOf(OperationClaimConflictError);
    await expect(failure).rejects.toThrow(
      /OrdersController\.create \(POST \/orders\) and QuotesController\.create \(POST \/quotes\)/,
    );
  });

  it('fails the boot on two @SingleFlight routes with identical options unless both are shared', async () => {
    @Controller('reports')
    class ReportsController {
      @Post()
      @SingleFlight({ operation: 'report', target: 'body.id' })
      export() {
        return {};
      }
    }
    @Controller('reports-v2')
    class ReportsV2Controller {
      @Post()
      @SingleFlight({ operation: 'report', target: 'body.id', shared: true })
      export() {
        return {};
      }
    }
    await expect(boot([ReportsController, ReportsV2Controller])).rejects.toThrow(
      /ReportsController\.export \(POST \/reports\) and ReportsV2Controller\.export/,
    );
  });

  it('lets routes share an operation when both are marked shared: true', async () => {
    @Controller('v1')
    class V1Controller {
      @Post('refund')
      @IdempotentKey({ operation: 'refund', scope: 'user.tenantId', shared: true })
      refund() {
        return {};
      }
      @Post('export')
      @SingleFlight({ operation: 'export', target: 'body.id', shared: true })
      export() {
        return {};
      }
    }
    @Controller('v2')
    class V2Controller {
      @Post('refund')
      @IdempotentKey({ operation: 'refund', scope: 'user.tenantId', shared: true })
      refund() {
        return {};
      }
      @Post('export')
      @SingleFlight({ operation: 'export', target: 'body.exportId', shared: true })
      export() {
        return {};
      }
    }
    const app = await boot([V1Controller, V2Controller]);
    await app.close();
  });

  describe('production guard', () => {
    const previous = process.env.NODE_ENV;
    afterEach(() => {
      process.env.NODE_ENV = previous;
    });

    @Controller('p')
    class PlainController {
      @Get()
      get() {
        return 'ok';
      }
    }

    it('refuses the in-memory defaults in production and says what to register', async () => {
      process.env.NODE_ENV = 'production';
      const failure = boot([PlainController]);
      await expect(failure).rejects.toBeInstanceOf(OncelyConfigurationError);
      await expect(failure).rejects.toThrow(
        /Register coordinator .* and store .*allowInMemory: true/,
      );
    });

    it('starts in production on the in-memory defaults with allowInMemory: true', async () => {
      process.env.NODE_ENV = 'production';
      const app = await boot([PlainController], { allowInMemory: true });
      await app.close();
    });
  });

  it('refuses replay allowlists naming set-cookie or per-response headers at start-up', async () => {
    await expect(
      boot([], { defaults: { replayHeaders: ['x-order-version', 'Set-Cookie'] } }),
    ).rejects.toThrow(ReplayHeaderPolicyError);
    for (const header of ['content-length', 'date', 'transfer-encoding', 'connection']) {
      await expect(boot([], { defaults: { replayHeaders: [header] } })).rejects.toThrow(
        new RegExp(`"${header}" cannot be replayed`),
      );
    }
  });

  it('validates decorator options when they are applied, naming the bad one', () => {
    const decorate = (decorator: MethodDecorator) => {
      class Target {
        handler() {}
      }
      decorator(
        Target.prototype,
        'handler',
        Object.getOwnPropertyDescriptor(Target.prototype, 'handler')!,
      );
    };
    expect(() =>
      decorate(IdempotentKey({ operation: 'x', scope: 'user.id', onBusy: 'later' as never })),
    ).toThrow(/Invalid oncely option "onBusy" on Target\.handler/);
    expect(() =>
      decorate(
        IdempotentKey({ operation: 'x', scope: 'user.id', idempotencykey: 'required' } as never),
      ),
    ).toThrow(/"idempotencykey" on Target\.handler: unknown option/);
    expect(() => decorate(IdempotentKey({ operation: 'x' }))).toThrow(
      /"scope".*never be shared across tenants/,
    );
    expect(() => decorate(SingleFlight({ operation: 'x', fingerprintBits: 32 }))).toThrow(
      /"key spec" on Target\.handler: .*fingerprintBits/,
    );
    expect(() => decorate(SingleFlight({ operation: 'x', resultTtl: -1 }))).toThrow(/"resultTtl"/);
    expect(() =>
      decorate(IdempotentKey({ operation: 'x', scope: 'user.id', replayHeaders: ['set-cookie'] })),
    ).toThrow(ReplayHeaderPolicyError);
    expect(() => decorate(SingleFlight({ operation: 'x', scope: 'tenant' }))).toThrow(
      RouteOptionsError,
    );
    expect(() =>
      decorate(IdempotentKey({ operation: 'x', scope: 'user.id', shared: 'yes' as never })),
    ).toThrow(/"shared" on Target\.handler/);
    expect(() => decorate(SingleFlight({ operation: 'x', shared: 1 as never }))).toThrow(
      /"shared" on Target\.handler/,
    );
    expect(() =>
      decorate(IdempotentKey({ operation: 'x', scope: 'user.id', previousVersions: ['v1'] })),
    ).toThrow(/"previousVersions" on Target\.handler: "v1" is the route's current version/);
    expect(() =>
      decorate(
        IdempotentKey({
          operation: 'x',
          scope: 'user.id',
          version: 'v2',
          previousVersions: ['v 1'],
        }),
      ),
    ).toThrow(/"previousVersions" on Target\.handler: "v 1" is not a version/);
    expect(() =>
      decorate(SingleFlight({ operation: 'x', previousVersions: ['v1'] } as never)),
    ).toThrow(/"previousVersions" on Target\.handler: unknown option/);
  });

  it('refuses handlers declared to return a stream or a file', async () => {
    @Controller('files')
    class FilesController {
      @Get()
      @SingleFlight({ operation: 'file', input: [] })
      file(): StreamableFile {
        return new StreamableFile(Buffer.from('x'));
      }
    }
    await expect(boot([FilesController])).rejects.toThrow(UnsupportedResponseError);
    await expect(boot([FilesController])).rejects.toThrow(
      /FilesController\.file \(GET \/files\) returned a StreamableFile/,
    );
  });

  it.each([
    ['a Readable', 'express', () => Readable.from(['x'])],
    ['a StreamableFile', 'express', () => new StreamableFile(Buffer.from('x'))],
    ['a Readable', 'fastify', () => Readable.from(['x'])],
    ['a StreamableFile', 'fastify', () => new StreamableFile(Buffer.from('x'))],
  ] as const)(
    'refuses at run time %s an async handler returned (Nest on %s), and keeps the refusal: its retry replays it, 1 execution',
    async (_, platform, produce) => {
      let executions = 0;
      @Controller('late-files')
      class LateFilesController {
        @Post()
        @IdempotentKey({ operation: 'late-file', scope: 'headers.x-tenant' })
        async file(): Promise<unknown> {
          executions += 1;
          return produce();
        }
      }
      const app = await createTestApp(platform, { namespace: uniqueNamespace() }, [
        LateFilesController,
      ]);
      try {
        const key = randomUUID();
        const send = () =>
          request(app.getHttpServer())
            .post('/late-files')
            .set('x-tenant', 't')
            .set('idempotency-key', key)
            .send({});
        const first = await send();
        const retry = await send();
        expect(first.status).toBe(500);
        expect(first.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(first.body).toEqual({
          type: 'urn:oncely:problem:unsupported-response',
          title: 'Response cannot be kept',
          status: 500,
          detail:
            'The request ran once but its response could not be kept; retries of this key get this error.',
        });
        expect(first.headers['idempotent-replayed']).toBeUndefined();
        expect(retry.status).toBe(500);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(retry.body).toEqual(first.body);
        expect(executions).toBe(1);
      } finally {
        await app.close();
      }
    },
  );

  it('refuses transactional routes without a store that supports transactions', async () => {
    @Controller('tx')
    class TxController {
      @Post()
      @IdempotentKey({ operation: 'tx', scope: 'user.id', transactional: true })
      create(@IdempotencyManager() manager: unknown, @Body() body: object) {
        return { manager: manager !== undefined, body };
      }
    }
    await expect(boot([TxController])).rejects.toThrow(TransactionalStoreRequiredError);
  });

  it('refuses @IdempotencyManager() on a route that is not transactional', async () => {
    @Controller('no-tx')
    class NoTxController {
      @Post()
      @IdempotentKey({ operation: 'no-tx', scope: 'user.id' })
      create(@IdempotencyManager() manager: unknown) {
        return { manager };
      }
    }
    await expect(boot([NoTxController])).rejects.toThrow(
      /@IdempotencyManager\(\).*transactional: true/,
    );
  });

  it("validates bodies with the module's validation options before anything else", async () => {
    class StrictDto {
      @IsString()
      name!: string;
    }
    let executions = 0;
    @Controller('strict')
    class StrictController {
      @Post()
      @IdempotentKey({ operation: 'strict', scope: 'headers.x-tenant' })
      create(@Body() dto: StrictDto) {
        executions += 1;
        return dto;
      }
    }
    const app = await boot([StrictController], {
      validation: { validator: { whitelist: true, forbidNonWhitelisted: true } },
    });
    try {
      const send = (body: object) =>
        request(app.getHttpServer())
          .post('/strict')
          .set('x-tenant', 't')
          .set('idempotency-key', randomUUID())
          .send(body);
      const refused = await send({ name: 'a', extra: 1 });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([
        { property: 'extra', messages: ['property extra should not exist'] },
      ]);
      expect((await send({ name: 'a' })).status).toBe(201);
      expect(executions).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('refuses bad module options with a clear message', async () => {
    await expect(boot([], { namespace: 'has space' })).rejects.toThrow(
      /"namespace" must be a name/,
    );
    await expect(boot([], { defaults: { leaseTtl: -5 } })).rejects.toThrow(/"defaults.leaseTtl"/);
    await expect(boot([], { defaults: { leaseTTL: 5 } })).rejects.toThrow(
      /"defaults.leaseTTL" is unknown/,
    );
    await expect(boot([], { coordinator: { host: 'localhost' } })).rejects.toThrow(
      /"coordinator" must be/,
    );
    await expect(boot([], { store: 42 })).rejects.toThrow(/"store" must be/);
    await expect(boot([], { maxStandbys: 0 })).rejects.toThrow(
      /"maxStandbys" must be a positive integer \(default 10000\), got 0/,
    );
    await expect(boot([], { rmq: { noAck: 'false' } })).rejects.toThrow(
      'OncelyModule option "rmq.noAck" must be true or false, the same as the noAck of the app\'s Transport.RMQ server; got string.',
    );
  });

  it('refuses an option forRoot does not read, naming the one meant', async () => {
    await expect(boot([], { servce: 'shop-api' })).rejects.toThrow(
      'OncelyModule has no option "servce": did you mean "service"? Its options are namespace, service, serviceAliases,',
    );
    await expect(boot([], { resolveUser: () => undefined })).rejects.toThrow(
      'OncelyModule has no option "resolveUser". Its options are',
    );
  });

  it('refuses the former connection options, saying which adapter to wrap them in', async () => {
    const client = new Redis({ ...services.redis, lazyConnect: true });
    try {
      await expect(boot([], { coordinator: { redis: client } })).rejects.toThrow(
        /"coordinator" must be a FlightCoordinator instance.*new RedisFlightCoordinator/,
      );
      await expect(boot([], { coordinator: client })).rejects.toThrow(
        /"coordinator" must be a FlightCoordinator instance/,
      );
      await expect(boot([], { store: { redis: client } })).rejects.toThrow(
        /"store" must be an IdempotencyRecordStore instance.*new RedisIdempotencyRecordStore/,
      );
      const dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
      await expect(boot([], { store: dataSource })).rejects.toThrow(
        /"store" must be an IdempotencyRecordStore instance.*new TypeOrmIdempotencyRecordStore/,
      );
    } finally {
      client.disconnect();
    }
  });

  it('fails the boot when the record table was never migrated, naming the migration', async () => {
    const dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
    }).initialize();
    const coordinator = new RedisFlightCoordinator(
      { ...services.redis, lazyConnect: true },
      { keyPrefix: `boot-${randomUUID()}:` },
    );
    try {
      const failure = boot([], {
        coordinator,
        store: new TypeOrmIdempotencyRecordStore(dataSource),
      });
      await expect(failure).rejects.toBeInstanceOf(RecordTableNotMigratedError);
      await expect(failure).rejects.toThrow(
        /oncely_idempotency_record does not exist.*CreateOncelySchema1796256000000.*withIdempotencyRecords/,
      );
      // The refused boot closed the coordinator it was handed, and left the DataSource open.
      await expect(coordinator.acquire('k', 'owner', 1_000)).rejects.toThrow(
        CoordinatorUnavailableError,
      );
      expect(dataSource.isInitialized).toBe(true);
    } finally {
      await dataSource.destroy();
    }
  });

  it('configures asynchronously with forRootAsync and an options class', async () => {
    @Injectable()
    class OncelyConfig implements ConfigurableModuleOptionsFactory<OncelyModuleOptions, 'create'> {
      create(): OncelyModuleOptions {
        return { namespace: uniqueNamespace() };
      }
    }
    @Controller('configured')
    class ConfiguredController {
      @Post()
      @IdempotentKey({ operation: 'configured', scope: 'headers.x-tenant' })
      create() {
        return { id: randomUUID() };
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [OncelyModule.forRootAsync({ useClass: OncelyConfig })],
      controllers: [ConfiguredController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const send = () =>
        request(app.getHttpServer())
          .post('/configured')
          .set('x-tenant', 't')
          .set('idempotency-key', 'configured-1')
          .send({});
      const first = await send();
      const replay = await send();
      expect(first.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
    } finally {
      await app.close();
    }
  });

  it('closes the adapters it was given on shutdown, leaving their clients open', async () => {
    const client = new Redis({ ...services.redis });
    const coordinator = new RedisFlightCoordinator(client, { keyPrefix: `boot-${randomUUID()}:` });
    try {
      const app = await boot([], { coordinator });
      await app.close();
      await expect(coordinator.acquire('k', 'owner', 1_000)).rejects.toThrow(
        CoordinatorUnavailableError,
      );
      expect(await client.ping()).toBe('PONG');
    } finally {
      await client.quit();
    }
  });

  it('configures asynchronously with forRootAsync and reports every decision to listeners and Prometheus', async () => {
    const events: OncelyEvent[] = [];
    const registry = new promClient.Registry();
    @Controller('evt')
    class EventsController {
      @Post()
      @IdempotentKey({ operation: 'evt', scope: 'headers.x-tenant' })
      create() {
        return { ok: true };
      }
    }
    @Module({
      providers: [{ provide: 'NAMESPACE', useValue: uniqueNamespace() }],
      exports: ['NAMESPACE'],
    })
    class ConfigModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        OncelyModule.forRootAsync({
          imports: [ConfigModule],
          inject: ['NAMESPACE'],
          useFactory: (namespace: string) => ({
            namespace,
            events: [
              (event) => events.push(event),
              createPrometheusListener(promClient, { registers: [registry] }),
            ],
          }),
          isGlobal: true,
        }),
      ],
      controllers: [EventsController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const key = randomUUID();
      const send = (body: object) =>
        request(app.getHttpServer())
          .post('/evt')
          .set('x-tenant', 't')
          .set('idempotency-key', key)
          .send(body);
      await send({ a: 1 });
      await send({ a: 1 });
      await send({ a: 2 });
      expect(events.map((e) => `${e.mechanism}:${e.outcome}`)).toEqual([
        'idempotency:executed',
        'idempotency:replayed',
        'idempotency:mismatch',
      ]);
      expect(events[0]?.operation).toMatch(/:evt:v1$/);
      const metrics = await registry.getSingleMetricAsString('oncely_decisions_total');
      expect(metrics).toMatch(/outcome="executed"\} 1/);
      expect(metrics).toMatch(/outcome="replayed"\} 1/);
      expect(metrics).toMatch(/outcome="mismatch"\} 1/);
    } finally {
      await app.close();
    }
  });
});
