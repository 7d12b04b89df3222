'use strict';
const { Warehouse } = require('../src/warehouse');

/** The app's warehouse, except that a test can hold reservations to keep a request in flight. */
class HoldableWarehouse extends Warehouse {
  #held;

  /** `reached` settles once a reservation waits: its request then holds its idempotency key. */
  hold() {
    let reach;
    let release;
    const reached = new Promise((resolve) => (reach = resolve));
    const released = new Promise((resolve) => (release = resolve));
    this.#held = { reach, released };
    return {
      reached,
      release: () => {
        this.#held = undefined;
        release();
      },
    };
  }

  async reserve(cartId, qty) {
    const held = this.#held;
    if (held) {
      held.reach();
      await held.released;
    }
    return super.reserve(cartId, qty);
  }
}

module.exports = { HoldableWarehouse };
