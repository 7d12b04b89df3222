import { Body, Controller, Post, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { IdempotencyManager, IdempotentKey } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '@oncely/typeorm';
import { DemoRoute } from '../identity/demo-route.decorator.js';
import type { DemoRequest } from '../identity/demo-principal.js';
import { ApiProblemResponses } from '../problems/api-problem-responses.decorator.js';
import { Problems } from '../problems/documented-problems.js';
import { DemoProblemType, ProblemException } from '../problems/problem.exception.js';
import { simulateWork } from '../simulation/simulate-work.js';
import { ExecutionStats } from '../stats/execution-stats.service.js';
import { CreateOrderDto, OrderDto } from './create-order.dto.js';
import { Order } from './order.entity.js';

export const ORDER_CREATE = 'order-create';

@ApiTags('orders')
@Controller('orders')
export class OrdersController {
  constructor(private readonly stats: ExecutionStats) {}

  /**
   * The client's `Idempotency-Key` (required), scoped by tenant, is the order's identity; the
   * whole body is its fingerprint. The order row and oncely's record commit in one transaction.
   */
  @Post()
  @DemoRoute('required')
  @IdempotentKey({
    operation: ORDER_CREATE,
    scope: 'user.tenantId',
    transactional: true,
    description:
      "Creates an order from a tenant's cart, with the record in the order's transaction",
  })
  @ApiOperation({ summary: 'Create an order (Idempotency-Key required)' })
  @ApiCreatedResponse({ type: OrderDto })
  @ApiProblemResponses(
    Problems.invalidBody,
    Problems.keyMissing,
    Problems.keyMalformed,
    Problems.invalidHeader,
    Problems.tenantMissing,
    Problems.inFlight,
    {
      status: 409,
      type: DemoProblemType.cartAlreadyOrdered,
      when: 'the cart was already ordered under another idempotency key (the table’s unique constraint).',
    },
    Problems.tooLarge,
    Problems.mismatch,
    Problems.leaseLost,
  )
  async create(
    @Body() body: CreateOrderDto,
    @Req() request: DemoRequest,
    @IdempotencyManager() manager: EntityManager,
  ): Promise<OrderDto> {
    const executionId = randomUUID();
    this.stats.recordExecution(ORDER_CREATE);
    await simulateWork(request);
    const order: Order = {
      id: randomUUID(),
      tenantId: request.user!.tenantId,
      cartId: body.cartId,
      items: body.items.map(({ sku, qty }) => ({ sku, qty })),
      note: body.note ?? null,
      executionId,
      createdAt: new Date().toISOString(),
    };
    try {
      await manager.insert(Order, order);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw new ProblemException({
        type: DemoProblemType.cartAlreadyOrdered,
        title: 'Cart already ordered',
        status: 409,
        detail: `Cart "${body.cartId}" was already ordered with another idempotency key. Retry with the original key to get that order.`,
      });
    }
    return {
      id: order.id,
      cartId: order.cartId,
      items: order.items,
      ...(body.note !== undefined && { note: body.note }),
      executionId,
    };
  }
}
