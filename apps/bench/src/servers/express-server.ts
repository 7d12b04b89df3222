/**
 * The plain-Express contenders: the bench handler on a bare Express route (the reference), and
 * behind `@oncely/express`'s `idempotent` middleware with its records on the Redis record store.
 */
import express, { type Request, type Response } from 'express';
import { createOncely } from '@oncely/express';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { acceptOrder, announceListening } from './bench-handler.js';
import { serverConfigFromEnv } from './server-config.js';

const config = serverConfigFromEnv();
const redis = { host: '127.0.0.1', port: config.redisPort };
const oncely = createOncely({
  namespace: 'bench',
  coordinator: new RedisFlightCoordinator(redis, { keyPrefix: config.keyPrefix }),
  store: new RedisIdempotencyRecordStore(redis, { keyPrefix: config.keyPrefix }),
});
await oncely.start();

/** The same handler as every other contender's, answering `201` as Nest does for a POST. */
function handler(request: Request, response: Response): void {
  response.status(201).json(acceptOrder(request.body));
}

const app = express();
app.use(express.json());
app.post('/bare', handler);
app.post(
  '/idem',
  oncely.idempotent({ name: 'POST /idem', operation: 'bench-idem', scope: 'headers.x-tenant' }),
  handler,
);

const server = app.listen(0, '127.0.0.1', () => {
  announceListening((server.address() as { port: number }).port);
});
// As the Nest servers do: close, then exit at once, so that `--cpu-prof` writes its profile.
process.once('SIGTERM', () => {
  server.close();
  void oncely.close().finally(() => process.exit(0));
});
