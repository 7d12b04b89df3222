import { Warehouse } from '../src/orders/warehouse.js';

export interface Hold {
  /** Settles once a reservation is waiting: its request holds its idempotency key. */
  readonly reached: Promise<void>;
  readonly release: () => void;
}

/** The app's warehouse, except that a test can hold reservations to keep a request in flight. */
export class HoldableWarehouse extends Warehouse {
  private held?: { reach: () => void; released: Promise<void> };

  hold(): Hold {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.held = { reach, released };
    return {
      reached,
      release: () => {
        this.held = undefined;
        release();
      },
    };
  }

  override async reserve(cartId: string, qty: number): Promise<string> {
    const held = this.held;
    if (held) {
      held.reach();
      await held.released;
    }
    return super.reserve(cartId, qty);
  }
}
