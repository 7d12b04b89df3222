'use strict';
const express = require('express');
const { randomUUID } = require('node:crypto');
const { createOncely } = require('@oncely/express');
const { authenticate } = require('./authenticate');
const { validateOrder } = require('./validate-order');
const { Warehouse } = require('./warehouse');

/**
 * The shop. Orders answer with `res.json`, invoices are written piece by piece with `res.write`
 * and `res.end`; oncely keeps either whole and replays the same bytes. It runs on its embedded
 * defaults (in-memory coordinator and records): right for one process, and what this app is.
 * Orders and invoices live in memory too, where a real app would use its database.
 */
function createApp({ warehouse = new Warehouse() } = {}) {
  const oncely = createOncely({ namespace: 'compat-express4' });
  const orders = [];
  const invoices = [];
  const app = express();
  app.use(express.json(), authenticate);

  app.post(
    '/orders',
    oncely.idempotent({
      name: 'POST /orders',
      operation: 'order-create',
      scope: 'user.tenantId',
      validate: validateOrder,
    }),
    // Express 4 does not catch a rejected promise: hand the error to `next` yourself.
    async (req, res, next) => {
      try {
        const { cartId, qty } = req.body;
        const reservation = await warehouse.reserve(cartId, qty);
        const order = { orderId: randomUUID(), tenantId: req.user.tenantId, cartId, qty };
        orders.push({ ...order, reservation });
        res.status(201).json({ ...order, reservation });
      } catch (error) {
        next(error);
      }
    },
  );

  app.post(
    '/orders/:orderId/invoice',
    oncely.idempotent({
      name: 'POST /orders/:orderId/invoice',
      operation: 'invoice-issue',
      scope: 'user.tenantId',
      target: 'params.orderId',
      input: [],
    }),
    (req, res) => {
      const invoice = { number: invoices.length + 1, orderId: req.params.orderId };
      invoices.push(invoice);
      res.status(201).type('text/plain');
      res.write(`Invoice ${invoice.number}\n`);
      res.write(`Order ${invoice.orderId}\n`);
      res.end(`Issued ${new Date().toISOString()}\n`);
    },
  );

  app.use((error, req, res, next) => {
    if (res.headersSent) return next(error);
    console.error(error);
    res.status(500).type('application/problem+json').json({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
    });
  });

  return { app, oncely, orders, invoices };
}

module.exports = { createApp };
