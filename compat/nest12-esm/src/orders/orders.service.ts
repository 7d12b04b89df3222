import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { CreateOrderDto } from './create-order.dto.js';
import { Warehouse } from './warehouse.js';

export interface Order {
  readonly orderId: string;
  readonly tenantId: string;
  readonly cartId: string;
  readonly qty: number;
  readonly reservation: string;
}

/** Places orders; keeps them in memory, where a real app would write to its database. */
@Injectable()
export class OrdersService {
  private readonly orders: Order[] = [];

  constructor(private readonly warehouse: Warehouse) {}

  async place(tenantId: string, dto: CreateOrderDto): Promise<Order> {
    const reservation = await this.warehouse.reserve(dto.cartId, dto.qty);
    const order = {
      orderId: randomUUID(),
      tenantId,
      cartId: dto.cartId,
      qty: dto.qty,
      reservation,
    };
    this.orders.push(order);
    return order;
  }

  /** Orders placed for one cart: how many times the route really ran for it. */
  placedFor(cartId: string): number {
    return this.orders.filter((order) => order.cartId === cartId).length;
  }
}
