import { randomUUID } from 'node:crypto';

/** Reserves stock: stands in for a call to another service, the side effect to run once. */
export class Warehouse {
  async reserve(cartId, qty) {
    return `reservation-${cartId}-${qty}-${randomUUID()}`;
  }
}
