// The plain-Express peer: express-idempotency with its Redis adapter, on the same Express major
// as @oncely/express's contender, serving the bench handler compiled from apps/bench/src (its
// own bare route is the reference of its ratios). Plain ESM, so no build step of its own.
import express from 'express';
import expressIdempotency from 'express-idempotency';
import redisAdapter from 'express-idempotency-redis-adapter';
import { acceptOrder, announceListening } from '../../dist/servers/bench-handler.js';

const { idempotency, getSharedIdempotencyService } = expressIdempotency;
const RedisAdapter = redisAdapter.default ?? redisAdapter;
const redisPort = Number(process.env.BENCH_REDIS_PORT ?? 6379);

const dataAdapter = new RedisAdapter({
  connectionConfig: { url: `redis://127.0.0.1:${redisPort}` },
});
await dataAdapter.connect();

function bare(request, response) {
  response.status(201).json(acceptOrder(request.body));
}

function idem(request, response) {
  // The library answers a replay itself and still calls the route: it asks the route to check.
  if (getSharedIdempotencyService().isHit(request)) return;
  bare(request, response);
}

const app = express();
app.use(express.json());
app.post('/bare', bare);
app.post('/idem', idempotency({ dataAdapter }), idem);

const server = app.listen(0, '127.0.0.1', () => announceListening(server.address().port));
process.once('SIGTERM', () => {
  server.close();
  void dataAdapter.disconnect().finally(() => process.exit(0));
});
