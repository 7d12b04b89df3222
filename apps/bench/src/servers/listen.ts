import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { announceListening } from './bench-handler.js';
import type { Platform } from './server-config.js';

/**
 * Boots `module` on loopback (after `configure`) (a free port), announces the port, and closes the app on SIGTERM so
 * that `--cpu-prof` can write its profile on the way out.
 */
export async function listen(
  module: Type,
  platform: Platform,
  configure: (app: INestApplication) => void = () => undefined,
): Promise<INestApplication> {
  const app =
    platform === 'fastify'
      ? await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), {
          logger: ['error'],
        })
      : await NestFactory.create(module, { logger: ['error'] });
  configure(app);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  // The harness stops each contender with SIGTERM between scenarios: close the app (and its Redis
  // and database connections) first, then exit at once, so no pending keep-alive socket delays it.
  process.once('SIGTERM', () => {
    void app.close().finally(() => process.exit(0));
  });
  announceListening(address.port);
  return app;
}
