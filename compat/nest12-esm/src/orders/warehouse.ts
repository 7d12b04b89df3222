import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';

/** Reserves stock: stands in for a call to another service, the side effect to run once. */
@Injectable()
export class Warehouse {
  async reserve(cartId: string, qty: number): Promise<string> {
    return `reservation-${cartId}-${qty}-${randomUUID()}`;
  }
}
