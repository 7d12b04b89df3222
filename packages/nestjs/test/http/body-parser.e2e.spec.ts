import { Body, Controller, Post, UseGuards, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ProblemType } from '@oncely/core';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import request from 'supertest';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';
import { Executions, uniqueNamespace } from '../fixtures/test-app.js';

@Controller()
@UseGuards(HeaderAuthGuard)
class PaymentsController {
  constructor(private readonly executions: Executions) {}

  @Post('payments')
  @IdempotentKey({ operation: 'payment', scope: 'user.tenantId' })
  pay(@Body() body: unknown) {
    return { body, run: this.executions.hit('payment') };
  }
}

/**
 * A Nest app made with `bodyParser: false` (a raw-body webhook app, say) and a route whose key
 * reads the body: keyed on a missing body, every payload under one key would replay the first
 * response. It is refused as on plain Express, before any lock or record.
 */
describe('a Nest-Express app without a body parser', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('no-parser') })],
      controllers: [PaymentsController],
      providers: [Executions],
    }).compile();
    app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
    await app.init();
  });

  afterAll(() => app.close());

  it('refuses a body-keyed route with problem+json naming the fix; nothing runs', async () => {
    const pay = (amount: string) =>
      request(app.getHttpServer())
        .post('/payments')
        .set('x-tenant', 't-1')
        .set('idempotency-key', 'k-1')
        .send({ amount });

    for (const refused of [await pay('10.00'), await pay('99.00')]) {
      expect(refused.status).toBe(500);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({
        type: ProblemType.bodyNotParsed,
        detail: expect.stringContaining("in Nest, keep the app's bodyParser on"),
      });
    }
    expect(app.get(Executions).of('payment')).toBe(0);
  });
});
