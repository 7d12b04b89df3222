import { Controller, Injectable, Post, Scope } from '@nestjs/common';
import { Mutation, Resolver } from '@nestjs/graphql';
import { MessagePattern } from '@nestjs/microservices';
import { Test, type TestingModule } from '@nestjs/testing';
import { OperationClaimConflictError } from '@oncely/core';
import { IdempotentKey, OncelyModule, SingleFlight } from '@oncely/nestjs';
import { ProtectedHandlerDiscovery } from '../../src/discovery/protected-handler.discovery.js';
import { uniqueNamespace } from '../fixtures/test-app.js';

@Controller('orders')
class OrdersController {
  @Post()
  @IdempotentKey({ operation: 'order-create', scope: 'headers.x-tenant' })
  create() {
    return { ok: true };
  }

  @MessagePattern('orders.charge')
  @IdempotentKey({
    operation: 'order-charge',
    scope: 'params.topic',
    target: 'body.id',
    idempotencyKey: 'ignored',
  })
  charge(payload: { id: string }) {
    return payload;
  }

  @Post('plain')
  plain() {
    return {};
  }
}

@Controller({ path: 'reports', scope: Scope.REQUEST })
class ReportsController {
  @Post()
  @SingleFlight({ operation: 'report-export', scope: 'headers.x-tenant' })
  export() {
    return {};
  }
}

@Resolver()
class PaymentsResolver {
  @Mutation(() => String)
  @IdempotentKey({ operation: 'payment-create', scope: 'user.tenantId', target: 'body.id' })
  createPayment() {
    return 'paid';
  }
}

@Injectable()
class SettlementJob {
  runs = 0;

  @IdempotentKey({
    operation: 'settle',
    scope: () => 'job',
    target: 'args.0',
    idempotencyKey: 'ignored',
  })
  async run(period: string) {
    this.runs += 1;
    return { period };
  }
}

async function compile(...providers: Array<new (...args: never[]) => object>) {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('disc') })],
    controllers: [OrdersController, ReportsController],
    providers: [PaymentsResolver, SettlementJob, ...providers],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('ProtectedHandlerDiscovery', () => {
  let moduleRef: TestingModule;
  let discovery: ProtectedHandlerDiscovery;

  beforeAll(async () => {
    moduleRef = await compile();
    discovery = moduleRef.get(ProtectedHandlerDiscovery);
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it('sorts every protected handler by where it is called from', () => {
    const orders = OrdersController.prototype;
    expect(discovery.httpRoute(orders.create)?.route.name).toBe(
      'OrdersController.create (POST /orders)',
    );
    expect(discovery.httpRoute(orders.create)?.statusCode).toBe(201);
    expect(discovery.callRoute('rpc', orders.charge)?.name).toBe(
      'OrdersController.charge (message handler)',
    );
    expect(discovery.httpRoute(orders.charge)).toBeUndefined();
    expect(discovery.callRoute('graphql', orders.charge)).toBeUndefined();
    expect(discovery.callRoute('graphql', PaymentsResolver.prototype.createPayment)?.name).toBe(
      'PaymentsResolver.createPayment (resolver)',
    );
    expect(discovery.httpRoute(orders.plain)).toBeUndefined();
  });

  it('finds the routes of request-scoped controllers from their class', () => {
    expect(discovery.httpRoute(ReportsController.prototype.export)?.route.name).toBe(
      'ReportsController.export (POST /reports)',
    );
  });

  it('wraps provider methods on their instance and leaves the class alone', async () => {
    const job = moduleRef.get(SettlementJob);
    expect(Object.prototype.hasOwnProperty.call(job, 'run')).toBe(true);
    expect(job.run).not.toBe(SettlementJob.prototype.run);
    await expect(job.run('2026-11')).resolves.toEqual({ period: '2026-11' });
    await expect(job.run('2026-11')).resolves.toEqual({ period: '2026-11' });
    expect(job.runs).toBe(1);
  });

  it('registers every kind in one operation registry: an HTTP route and a provider method cannot share an operation', async () => {
    @Injectable()
    class CreatesOrdersToo {
      @IdempotentKey({
        operation: 'order-create',
        scope: () => 'job',
        target: 'args.0',
        idempotencyKey: 'ignored',
      })
      async create(id: string) {
        return id;
      }
    }
    const failed = compile(CreatesOrdersToo);
    await expect(failed).rejects.toThrow(OperationClaimConflictError);
    await expect(failed).rejects.toThrow(
      /OrdersController\.create.*CreatesOrdersToo\.create|CreatesOrdersToo\.create.*OrdersController\.create/s,
    );
  });
});
