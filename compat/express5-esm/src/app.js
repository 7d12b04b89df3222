import { createOncely, getOncelyContext } from '@oncely/express';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import express from 'express';
import { randomUUID } from 'node:crypto';
import { authenticate } from './authenticate.js';
import { Order } from './order.entity.js';
import { validateOrder } from './validate-order.js';
import { Warehouse } from './warehouse.js';

/**
 * The shop, on an initialised DataSource. Its idempotency records live in PostgreSQL beside the
 * orders, and `POST /orders` is transactional: the order row and its record commit together, or
 * neither does. The coordinator is oncely's in-memory default: one process.
 */
export function createApp({ dataSource, warehouse = new Warehouse() }) {
  const oncely = createOncely({
    namespace: 'compat-express5',
    store: new TypeOrmIdempotencyRecordStore(dataSource),
  });
  const app = express();
  app.use(express.json(), authenticate);

  app.post(
    '/orders',
    oncely.idempotent({
      name: 'POST /orders',
      operation: 'order-create',
      scope: 'user.tenantId',
      validate: validateOrder,
      transactional: true,
    }),
    // Express 5 passes a rejected promise to the error handlers itself.
    async (req, res) => {
      const { cartId, qty } = req.body;
      const reservation = await warehouse.reserve(cartId, qty);
      // Write through the call's transaction: a write on any other connection is refused.
      const manager = getOncelyContext(req).transaction;
      const order = await manager.save(Order, {
        id: randomUUID(),
        tenantId: req.user.tenantId,
        cartId,
        qty,
        reservation,
      });
      res.status(201).json(order);
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

  return { app, oncely };
}
