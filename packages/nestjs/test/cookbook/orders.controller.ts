import {
  Body,
  ConflictException,
  Controller,
  Injectable,
  Post,
  Req,
  ServiceUnavailableException,
} from '@nestjs/common';
import { IdempotentKey, KeyIgnore } from '@oncely/nestjs';
import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  Min,
  ValidateNested,
} from 'class-validator';
import { randomUUID } from 'node:crypto';
import type { Principal } from './support/cookbook-app.js';
import type { Gate } from './support/gate.js';

export class OrderLineDto {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

export class CreateOrderDto {
  @IsString() cartId!: string;
  @ValidateNested({ each: true }) @Type(() => OrderLineDto) @ArrayMinSize(1) lines!: OrderLineDto[];
  // Set by the client at send time: a retry carries another value, so it must not count.
  @IsOptional() @IsISO8601() @KeyIgnore() clientSentAt?: string;
}

export interface Order {
  readonly orderId: string;
  readonly cartId: string;
  readonly lines: readonly OrderLineDto[];
}

/**
 * Stands in for the orders table and its `UNIQUE (tenant_id, cart_id)`: a cart becomes one
 * order, whichever idempotency key its request carried.
 */
@Injectable()
export class OrderBook {
  readonly placed: Order[] = [];
  gate: Gate | undefined;
  down = false;
  readonly #byCart = new Map<string, Order>();

  async place(tenantId: string, dto: CreateOrderDto): Promise<Order> {
    await this.gate?.pass();
    if (this.down) throw new ServiceUnavailableException('The orders database is unavailable.');
    const cart = `${tenantId}/${dto.cartId}`;
    if (this.#byCart.has(cart)) {
      throw new ConflictException(`Cart ${dto.cartId} was already ordered.`);
    }
    const order = {
      orderId: randomUUID(),
      cartId: dto.cartId,
      lines: dto.lines.map(({ sku, qty }) => ({ sku, qty })),
    };
    this.#byCart.set(cart, order);
    this.placed.push(order);
    return order;
  }
}

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrderBook) {}

  @Post()
  @IdempotentKey({
    operation: 'order-create',
    // The client's Idempotency-Key (required by default) is only ever compared within one user.
    scope: ['user.tenantId', 'user.userId'],
    retention: 24 * 60 * 60 * 1000,
  })
  create(@Body() dto: CreateOrderDto, @Req() req: { user: Principal }): Promise<Order> {
    return this.orders.place(req.user.tenantId, dto);
  }
}
