import {
  Body,
  Controller,
  Injectable,
  Post,
  UseGuards,
  type CallHandler,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { IdempotentKey, OncelyModule, SingleFlight } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import { map, tap, type Observable } from 'rxjs';
import request from 'supertest';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';
import {
  Executions,
  PLATFORMS,
  startOn,
  uniqueNamespace,
  type Platform,
} from '../fixtures/test-app.js';

/** The NestJS docs' response-mapping interceptor: every value goes out as `{ data }`. */
@Injectable()
class TransformInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((data: unknown) => ({ data })));
  }
}

/**
 * A layer that sets a header of its own once the value is there, as request-id and timing
 * interceptors do, on whichever platform the app runs.
 */
@Injectable()
class ServedByInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const response = context.switchToHttp().getResponse<{
      header?: (name: string, value: string) => unknown;
      setHeader?: (name: string, value: string) => unknown;
    }>();
    return next.handle().pipe(
      tap(() => {
        if (typeof response.setHeader === 'function') response.setHeader('x-served-by', 'node-1');
        else response.header?.('x-served-by', 'node-1');
      }),
    );
  }
}

@Controller()
@UseGuards(HeaderAuthGuard)
class QuotesController {
  constructor(private readonly executions: Executions) {}

  @Post('payments')
  @IdempotentKey({ operation: 'payment', scope: 'user.tenantId' })
  pay(@Body() body: { amount: string }) {
    return { id: randomUUID(), amount: body.amount, run: this.executions.hit('payment') };
  }

  @Post('quotes')
  @SingleFlight({ operation: 'quote', scope: 'user.tenantId', target: 'body.sku' })
  quote(@Body() body: { sku: string }) {
    return { id: randomUUID(), sku: body.sku, run: this.executions.hit('quote') };
  }
}

async function startApp(platform: Platform): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('layers') })],
    controllers: [QuotesController],
    providers: [
      Executions,
      { provide: APP_INTERCEPTOR, useClass: TransformInterceptor },
      { provide: APP_INTERCEPTOR, useClass: ServedByInterceptor },
    ],
  }).compile();
  return startOn(platform, moduleRef);
}

const pay = (app: INestApplication, key: string, amount: string) =>
  request(app.getHttpServer())
    .post('/payments')
    .set('x-tenant', 'acme')
    .set('idempotency-key', key)
    .send({ amount });

describe.each(PLATFORMS)("the app's outer interceptors on %s", (platform) => {
  let app: INestApplication;

  beforeEach(async () => {
    app = await startApp(platform);
  });

  afterEach(async () => {
    await app.close();
  });

  it('replays the bytes the first answer sent, never the mapping applied twice', async () => {
    const key = randomUUID();
    const first = await pay(app, key, '10.00');
    const retry = await pay(app, key, '10.00');
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ data: { id: expect.any(String), amount: '10.00', run: 1 } });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(retry.headers['content-length']).toBe(String(Buffer.byteLength(first.text)));
    expect(app.get(Executions).of('payment')).toBe(1);
  });

  it('serves a cached SingleFlight result as the first answer went out, once mapped', async () => {
    const quote = () =>
      request(app.getHttpServer()).post('/quotes').set('x-tenant', 'acme').send({ sku: 'sku-1' });
    const first = await quote();
    const cached = await quote();
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ data: { id: expect.any(String), sku: 'sku-1', run: 1 } });
    expect(cached.status).toBe(201);
    expect(cached.text).toBe(first.text);
    expect(app.get(Executions).of('quote')).toBe(1);
  });

  it("keeps the header an outer layer sets for the replaying request's own answer", async () => {
    const key = randomUUID();
    const first = await pay(app, key, '12.00');
    const retry = await pay(app, key, '12.00');
    expect(first.headers['x-served-by']).toBe('node-1');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['x-served-by']).toBe('node-1');
    expect(app.get(Executions).of('payment')).toBe(1);
  });
});
