import {
  Body,
  Controller,
  Post,
  UseGuards,
  ValidationPipe,
  type INestApplication,
  type Provider,
  type ValidationPipeOptions,
} from '@nestjs/common';
import { APP_PIPE } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ProblemType } from '@oncely/core';
import { IdempotentKey, OncelyModule, type OncelyModuleOptions } from '@oncely/nestjs';
import { IsString } from 'class-validator';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';
import {
  Executions,
  PLATFORMS,
  startOn,
  uniqueNamespace,
  type Platform,
} from '../fixtures/test-app.js';

class PaymentDto {
  @IsString() orderId!: string;
  @IsString() amount!: string;
}

@Controller('payments')
@UseGuards(HeaderAuthGuard)
class PaymentsController {
  constructor(private readonly executions: Executions) {}

  @Post()
  @IdempotentKey({ operation: 'payment', scope: 'user.tenantId' })
  pay(@Body() dto: PaymentDto) {
    return {
      id: randomUUID(),
      amount: dto.amount,
      dtoInstance: dto instanceof PaymentDto,
      run: this.executions.hit('payment'),
    };
  }
}

/** How the app registers its global `ValidationPipe`, as the NestJS docs show both ways. */
const REGISTRATIONS = ['useGlobalPipes', 'APP_PIPE useValue', 'APP_PIPE useClass'] as const;
type Registration = (typeof REGISTRATIONS)[number] | 'no global pipe';

function appPipeProvider(registration: Registration, settings: ValidationPipeOptions): Provider[] {
  switch (registration) {
    case 'useGlobalPipes':
    case 'no global pipe':
      return [];
    case 'APP_PIPE useValue':
      return [{ provide: APP_PIPE, useValue: new ValidationPipe(settings) }];
    case 'APP_PIPE useClass':
      return [
        {
          provide: APP_PIPE,
          useClass: class AppValidationPipe extends ValidationPipe {
            constructor() {
              super(settings);
            }
          },
        },
      ];
  }
}

async function startApp(
  platform: Platform,
  registration: Registration,
  settings: ValidationPipeOptions,
  options: Partial<OncelyModuleOptions> = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('pipe'), ...options })],
    controllers: [PaymentsController],
    providers: [Executions, ...appPipeProvider(registration, settings)],
  }).compile();
  return startOn(platform, moduleRef, (app) => {
    if (registration === 'useGlobalPipes') app.useGlobalPipes(new ValidationPipe(settings));
  });
}

const pay = (app: INestApplication, key: string, body: object) =>
  request(app.getHttpServer())
    .post('/payments')
    .set('x-tenant', 'acme')
    .set('idempotency-key', key)
    .send(body);

const payment = { orderId: 'o-1', amount: '10.00' };

describe.each(PLATFORMS)("the app's global ValidationPipe on %s", (platform) => {
  describe.each(REGISTRATIONS)('registered with %s', (registration) => {
    it('replays a retry carrying a field the whitelist strips, instead of 422', async () => {
      const app = await startApp(platform, registration, { whitelist: true });
      try {
        const key = randomUUID();
        const first = await pay(app, key, payment);
        expect(first.status).toBe(201);
        const retry = await pay(app, key, { ...payment, note: 'sent by a newer client' });
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(retry.body).toEqual(first.body);
        const changed = await pay(app, key, { ...payment, amount: '11.00' });
        expect(changed.status).toBe(422);
        expect(app.get(Executions).of('payment')).toBe(1);
      } finally {
        await app.close();
      }
    });

    it('refuses an unknown field with 400 when the app forbids it, before running anything', async () => {
      const app = await startApp(platform, registration, {
        whitelist: true,
        forbidNonWhitelisted: true,
      });
      try {
        const refused = await pay(app, randomUUID(), { ...payment, note: 'x' });
        expect(refused.status).toBe(400);
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(refused.body.type).toBe(ProblemType.invalidBody);
        expect(refused.body.errors).toEqual([
          { property: 'note', messages: ['property note should not exist'] },
        ]);
        expect(app.get(Executions).of('payment')).toBe(0);
      } finally {
        await app.close();
      }
    });

    it('hands the handler the DTO instance when the app pipe transforms', async () => {
      const app = await startApp(platform, registration, { whitelist: true, transform: true });
      try {
        const first = await pay(app, randomUUID(), payment);
        expect(first.status).toBe(201);
        expect(first.body.dtoInstance).toBe(true);
      } finally {
        await app.close();
      }
    });

    it("lets the module's explicit validation option win over the app's pipe", async () => {
      const app = await startApp(
        platform,
        registration,
        { whitelist: true },
        {
          validation: { validator: { forbidUnknownValues: false } },
        },
      );
      try {
        const key = randomUUID();
        expect((await pay(app, key, payment)).status).toBe(201);
        const retry = await pay(app, key, { ...payment, note: 'kept by oncely, so it differs' });
        expect(retry.status).toBe(422);
        expect(app.get(Executions).of('payment')).toBe(1);
      } finally {
        await app.close();
      }
    });
  });
});

describe.each(PLATFORMS)('an app without a global ValidationPipe on %s', (platform) => {
  it("hands the handler oncely's validated DTO instance", async () => {
    const app = await startApp(platform, 'no global pipe', {});
    try {
      const first = await pay(app, randomUUID(), payment);
      expect(first.status).toBe(201);
      expect(first.body.dtoInstance).toBe(true);
    } finally {
      await app.close();
    }
  });
});
