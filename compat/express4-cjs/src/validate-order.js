'use strict';
const { InvalidBodyError } = require('@oncely/express');

/**
 * The order body, checked before oncely builds its key: a `400 invalid-body` then locks and
 * records nothing. Returns only the fields an order has, so nothing else reaches the key.
 */
function validateOrder(body) {
  const violations = [];
  if (typeof body?.cartId !== 'string' || body.cartId === '') {
    violations.push({ property: 'cartId', messages: ['cartId must be a non-empty string'] });
  }
  if (!Number.isInteger(body?.qty) || body.qty < 1 || body.qty > 100) {
    violations.push({ property: 'qty', messages: ['qty must be an integer from 1 to 100'] });
  }
  if (violations.length > 0) throw new InvalidBodyError(violations);
  return { cartId: body.cartId, qty: body.qty };
}

module.exports = { validateOrder };
