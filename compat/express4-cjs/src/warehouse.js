'use strict';
const { randomUUID } = require('node:crypto');

/** Reserves stock: stands in for a call to another service, the side effect to run once. */
class Warehouse {
  async reserve(cartId, qty) {
    return `reservation-${cartId}-${qty}-${randomUUID()}`;
  }
}

module.exports = { Warehouse };
