import {
  Body,
  Controller,
  Header,
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
import { map, type Observable } from 'rxjs';
import request from 'supertest';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';
import {
  Executions,
  PLATFORMS,
  startOn,
  uniqueNamespace,
  type Platform,
} from '../fixtures/test-app.js';

interface Order {
  id: string;
  secret?: string;
  audit: string[];
}

/** Everything the careless layer was handed, as it was handed (a JSON snapshot, or the bytes). */
const seen: string[] = [];

/**
 * A careless but ordinary outer layer: it changes what it is handed in place (strips a field,
 * appends to a list, scrubs bytes) instead of mapping to a copy.
 */
@Injectable()
class ScrubInPlaceInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((value: unknown) => {
        if (Buffer.isBuffer(value)) {
          seen.push(value.toString('utf8'));
          return value.fill('*');
        }
        if (typeof value === 'string') {
          seen.push(value);
          return value;
        }
        const order = value as Order;
        seen.push(JSON.stringify(order));
        delete order.secret;
        order.audit.push('scrubbed');
        return order;
      }),
    );
  }
}

@Controller()
@UseGuards(HeaderAuthGuard)
class OrdersController {
  constructor(private readonly executions: Executions) {}

  @Post('orders')
  @IdempotentKey({ operation: 'order', scope: 'user.tenantId' })
  place(@Body() body: { sku: string }): Order {
    return { id: `${body.sku}-${this.executions.hit('order')}`, secret: 's3cr3t', audit: [] };
  }

  @Post('quotes')
  @SingleFlight({ operation: 'quote', target: 'body.sku' })
  quote(@Body() body: { sku: string }): Order {
    return { id: `${body.sku}-${this.executions.hit('quote')}`, secret: 's3cr3t', audit: [] };
  }

  @Post('labels')
  @SingleFlight({ operation: 'label', target: 'body.sku' })
  @Header('content-type', 'text/plain; charset=utf-8')
  label(@Body() body: { sku: string }): string {
    return `label ${body.sku} #${this.executions.hit('label')}`;
  }
}

async function startApp(platform: Platform): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('in-place') })],
    controllers: [OrdersController],
    providers: [Executions, { provide: APP_INTERCEPTOR, useClass: ScrubInPlaceInterceptor }],
  }).compile();
  return startOn(platform, moduleRef);
}

describe.each(PLATFORMS)('an outer layer that changes what it is handed, on %s', (platform) => {
  let app: INestApplication;

  beforeEach(async () => {
    seen.length = 0;
    app = await startApp(platform);
  });

  afterEach(async () => {
    await app.close();
  });

  const post = (path: string, sku: string, key?: string) => {
    const call = request(app.getHttpServer()).post(path).set('x-tenant', 'acme').send({ sku });
    return key === undefined ? call : call.set('idempotency-key', key);
  };

  it.each([
    ['an idempotent replay', '/orders', 'order', randomUUID()],
    ['a cached SingleFlight result', '/quotes', 'quote', undefined],
  ])(
    'answers %s with the first answer, and hands each retry a value of its own',
    async (_case, path, operation, key) => {
      const first = await post(path, 'sku-1', key);
      const second = await post(path, 'sku-1', key);
      const third = await post(path, 'sku-1', key);

      expect(first.body).toEqual({ id: 'sku-1-1', audit: ['scrubbed'] });
      expect(second.text).toBe(first.text);
      expect(third.text).toBe(first.text);
      const sent = JSON.stringify({ id: 'sku-1-1', audit: ['scrubbed'] });
      expect(seen).toEqual([
        JSON.stringify({ id: 'sku-1-1', secret: 's3cr3t', audit: [] }),
        sent,
        sent,
      ]);
      expect(app.get(Executions).of(operation)).toBe(1);
    },
  );

  it('answers a cached byte body with its own bytes, whatever a layer wrote over the ones it was handed', async () => {
    const first = await post('/labels', 'sku-2');
    const second = await post('/labels', 'sku-2');
    const third = await post('/labels', 'sku-2');

    expect(first.text).toBe('label sku-2 #1');
    expect(second.text).toBe(first.text);
    expect(third.text).toBe(first.text);
    expect(seen).toEqual(['label sku-2 #1', 'label sku-2 #1', 'label sku-2 #1']);
    expect(app.get(Executions).of('label')).toBe(1);
  });
});
