import { Controller, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OncelyConfigurationError, type OncelyEvent } from '@oncely/core';
import { IdempotentKey, OncelyModule, type OncelyModuleAsyncOptions } from '@oncely/nestjs';
import request from 'supertest';
import { ONCELY_RUNTIME } from '../../src/oncely.constants.js';
import type { OncelyRuntime } from '../../src/oncely.runtime.js';

@Controller('payments')
class PaymentsController {
  @Post()
  @IdempotentKey({ operation: 'payment-create', scope: 'headers.x-tenant' })
  create() {
    return { paid: true };
  }
}

async function boot(options: OncelyModuleAsyncOptions): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRootAsync(options)],
    controllers: [PaymentsController],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** `forRootAsync` with `namespace`, `service` and `defaults` next to its factory. */
describe('options given to forRootAsync next to the factory', () => {
  it('join the factory options: keys use the namespace, claims the service and defaults', async () => {
    const events: OncelyEvent[] = [];
    const app = await boot({
      namespace: 'billing',
      service: 'billing-api',
      defaults: { retention: 60_000 },
      useFactory: () => ({ events: (event: OncelyEvent) => events.push(event) }),
    });
    try {
      const response = await request(app.getHttpServer())
        .post('/payments')
        .set('x-tenant', 't1')
        .set('idempotency-key', 'pay-1')
        .send({});

      expect(response.status).toBe(201);
      expect(events.map((event) => event.operation)).toEqual(['billing:payment-create:v1']);
      const runtime = app.get<OncelyRuntime>(ONCELY_RUNTIME);
      expect(runtime.service).toBe('billing-api');
      expect(runtime.claims()).toEqual([
        expect.objectContaining({
          owner: 'billing-api',
          namespace: 'billing',
          ttl: { lease: 30_000, retention: 60_000, replayCache: 60_000 },
        }),
      ]);
    } finally {
      await app.close();
    }
  });

  it('may be repeated by the factory with the same value', async () => {
    const app = await boot({
      namespace: 'billing',
      useFactory: () => ({ namespace: 'billing', defaults: { wait: 1_000 } }),
    });
    await app.close();
  });

  it('refuse an option the factory returns that no one reads, naming the one meant', async () => {
    const failure = boot({
      namespace: 'billing',
      useFactory: () => ({ servce: 'billing-api' }) as never,
    });

    await expect(failure).rejects.toBeInstanceOf(OncelyConfigurationError);
    await expect(failure).rejects.toThrow(
      'OncelyModule has no option "servce": did you mean "service"? Its options are namespace, service,',
    );
  });

  it('refuse an option forRootAsync does not read next to its factory, saying where it goes', () => {
    const aliasesBeside = { serviceAliases: ['billing'], useFactory: () => ({}) } as never;
    expect(() => OncelyModule.forRootAsync(aliasesBeside)).toThrow(
      'OncelyModule.forRootAsync reads "serviceAliases" from what its options factory returns, not from next to it: return it from useFactory (or the class\'s create()).',
    );
    const misspelt = { namespace: 'billing', useFactroy: () => ({}) } as never;
    expect(() => OncelyModule.forRootAsync(misspelt)).toThrow(
      'OncelyModule.forRootAsync has no option "useFactroy": did you mean "useFactory"?',
    );
  });

  it('refuse a factory giving another value, naming the option', async () => {
    const failure = boot({
      namespace: 'billing',
      service: 'billing-api',
      useFactory: () => ({ namespace: 'billing', service: 'payments-api' }),
    });

    await expect(failure).rejects.toBeInstanceOf(OncelyConfigurationError);
    await expect(failure).rejects.toThrow(
      'OncelyModule option "service" is given to forRootAsync and, with another value, by its options factory.',
    );
  });

  it('take serviceAliases from the factory, checked like forRoot’s and createOncely()’s', async () => {
    await expect(
      boot({
        namespace: 'billing',
        service: 'billing-api',
        useFactory: () => ({ serviceAliases: ['billing', 'billing-api'] }),
      }),
    ).rejects.toThrow(
      /^OncelyModule option "serviceAliases" lists "billing-api", the service’s own name/,
    );
    const app = await boot({
      namespace: 'billing',
      service: 'billing-api',
      useFactory: () => ({ serviceAliases: ['billing'] }),
    });
    try {
      expect(app.get<OncelyRuntime>(ONCELY_RUNTIME).serviceAliases).toEqual(['billing']);
    } finally {
      await app.close();
    }
  });

  it('are checked like any option', async () => {
    await expect(
      boot({ namespace: 'billing', service: 'billing api', useFactory: () => ({}) }),
    ).rejects.toThrow(/OncelyModule option "service" must name the service .*got "billing api"/);
  });
});
