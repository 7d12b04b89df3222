import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { IdempotentKey } from '@oncely/nestjs';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { TenantGuard, type User } from '../auth/tenant.guard.js';
import { CreateOrderDto } from './create-order.dto.js';
import { OrdersService, type Order } from './orders.service.js';

@Controller('orders')
@UseGuards(TenantGuard)
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /**
   * `Idempotency-Key` required; the key is scoped to the caller's tenant, so two tenants sending
   * the same key are two orders. The guard has run, so `user` is set (its tenant may be absent:
   * oncely then answers `400 missing-key-field` before this method runs).
   */
  @Post()
  @IdempotentKey({ operation: 'order-create', scope: 'user.tenantId' })
  create(@Body() dto: CreateOrderDto, @CurrentUser() user: User): Promise<Order> {
    return this.orders.place(user.tenantId!, dto);
  }
}
