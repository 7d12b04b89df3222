import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ProblemType } from '@oncely/core';
import { randomUUID } from 'crypto';
import * as request from 'supertest';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/configure-app';
import { ExpenseLedger } from '../src/expenses/expenses.controller';

// multer's FileInterceptor is `@nestjs/platform-express`'s: these uploads run on Express.
describe('expense claims with a receipt upload (FileInterceptor)', () => {
  let app: INestApplication;
  let ledger: ExpenseLedger;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = configureApp(moduleRef.createNestApplication({ logger: false }));
    await app.listen(0, '127.0.0.1');
    ledger = app.get(ExpenseLedger);
  });

  afterAll(() => app?.close());

  beforeEach(() => {
    ledger.filed = 0;
  });

  const claim = (key: string, scan: string, amountCents = '1250') =>
    request(app.getHttpServer())
      .post('/expenses')
      .set('x-user-id', 'u-1')
      .set('x-tenant-id', 'acme')
      .set('idempotency-key', key)
      .field('title', 'Taxi to the airport')
      .field('amountCents', amountCents)
      .attach('receipt', Buffer.from(scan), 'receipt.pdf');

  it('files the claim once: the same upload replays, another scan or amount under the key is 422', async () => {
    const key = randomUUID();
    const first = await claim(key, 'scan of receipt 17');
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.any(String),
      title: 'Taxi to the airport',
      amountCents: 1250,
      receipt: 'receipt.pdf',
      bytes: 18,
    });

    const retry = await claim(key, 'scan of receipt 17');
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(first.text);
    expect(retry.headers['idempotent-replayed']).toBe('true');

    const otherScan = await claim(key, 'scan of receipt 18');
    expect(otherScan.status).toBe(422);
    expect(otherScan.body).toMatchObject({ type: ProblemType.payloadMismatch });
    const otherAmount = await claim(key, 'scan of receipt 17', '9999');
    expect(otherAmount.status).toBe(422);
    expect(ledger.filed).toBe(1);
  });

  it('validates the form fields through the DTO before anything is filed: 400', async () => {
    const refused = await claim(randomUUID(), 'scan', 'twelve');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ type: ProblemType.invalidBody });
    expect(ledger.filed).toBe(0);
  });

  it('files 10 concurrent retries of one upload once', async () => {
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => claim(key, 'scan of receipt 17')),
    );
    expect(ledger.filed).toBe(1);
    for (const response of responses) expect([201, 409]).toContain(response.status);
  });
});
