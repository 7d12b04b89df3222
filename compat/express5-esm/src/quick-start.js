import express from 'express';
import { randomUUID } from 'node:crypto';
import { createOncely } from '@oncely/express';

// One process: in-memory defaults. Several nodes: add a coordinator (Redis) and a store (TypeORM).
const oncely = createOncely({ namespace: 'shop', service: 'shop-api' });
const app = express();

// express.json() and your authentication run before oncely's middleware: keys read req.body and
// req.user. This stand-in takes the tenant from a header; a real one verifies a token.
app.use(express.json(), (req, res, next) => {
  const tenantId = req.get('x-tenant-id');
  if (!tenantId) return res.status(401).json({ message: 'x-tenant-id missing' });
  req.user = { tenantId };
  next();
});

app.post(
  '/orders',
  oncely.idempotent({ name: 'POST /orders', operation: 'order-create', scope: 'user.tenantId' }),
  (req, res) => {
    res.status(201).json({ orderId: randomUUID(), cartId: req.body.cartId, qty: req.body.qty });
  },
);

// Before listening: starts the store and registers the routes' claims.
await oncely.start();
const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () => console.log(`Listening on port ${port}`));
process.once('SIGTERM', () => server.close(() => oncely.close()));
