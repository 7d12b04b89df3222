import { Controller, Post } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import express from 'express';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Executions, uniqueNamespace } from '../fixtures/test-app.js';

@Controller('orders')
class OrdersController {
  constructor(private readonly executions: Executions) {}

  @Post()
  @IdempotentKey({ operation: 'mounted-order', scope: 'headers.x-tenant' })
  create() {
    return { orderId: randomUUID(), execution: this.executions.hit('mounted-order') };
  }
}

/**
 * Nest's Express instance mounted in a parent Express app, as serverless handlers and gradual
 * migrations do: Express swaps each response's prototype to the Nest app's on the way in, and
 * back to the parent's when a request leaves it. (A protected route cannot pass a request on:
 * `@Next()` is refused at start-up.)
 */
describe('a Nest app mounted in a parent Express app', () => {
  it('keeps and replays its answers, and runs concurrent duplicates once', async () => {
    const nestServer = express();
    const moduleRef = await Test.createTestingModule({
      imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('mounted') })],
      controllers: [OrdersController],
      providers: [Executions],
    }).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(nestServer), { logger: false });
    await app.init();
    const parent = express();
    parent.use('/api', nestServer);
    try {
      const send = (path: string, key: string) =>
        request(parent).post(path).set('x-tenant', 't-1').set('idempotency-key', key).send({});

      const orderKey = randomUUID();
      const order = await send('/api/orders', orderKey);
      const orderRetry = await send('/api/orders', orderKey);
      expect(order.status).toBe(201);
      expect(orderRetry.headers['idempotent-replayed']).toBe('true');
      expect(orderRetry.body).toEqual(order.body);

      const concurrentKey = randomUUID();
      const concurrent = await Promise.all(
        Array.from({ length: 10 }, () => send('/api/orders', concurrentKey)),
      );
      const bodies = concurrent.filter((reply) => reply.status === 201).map((reply) => reply.body);
      expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
      expect(concurrent.every((reply) => reply.status === 201 || reply.status === 409)).toBe(true);
      expect(app.get(Executions).of('mounted-order')).toBe(2);
    } finally {
      await app.close();
    }
  });
});
