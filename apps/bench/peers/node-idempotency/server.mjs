// The peer contender: @node-idempotency/nestjs with its Redis storage adapter, on Nest 10 (the
// only major it accepts), serving the bench handler compiled from apps/bench/src. Plain ESM
// without decorator syntax, so it runs without a build step of its own.
import 'reflect-metadata';
import common from '@nestjs/common';
import core from '@nestjs/core';
import platformFastify from '@nestjs/platform-fastify';
import nodeIdempotency from '@node-idempotency/nestjs';
import { acceptOrder, announceListening } from '../../dist/servers/bench-handler.js';

const { Body, Controller, HttpCode, Module, Post } = common;
const { NestFactory } = core;
const { FastifyAdapter } = platformFastify;
const { Idempotent, NodeIdempotencyModule } = nodeIdempotency;

const platform = process.env.BENCH_PLATFORM === 'fastify' ? 'fastify' : 'express';
const redisPort = Number(process.env.BENCH_REDIS_PORT ?? 6379);

class PeerBenchController {
  bare(body) {
    return acceptOrder(body);
  }

  idem(body) {
    return acceptOrder(body);
  }
}

function decorateMethod(decorators, name) {
  const prototype = PeerBenchController.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
  Reflect.decorate(decorators, prototype, name, descriptor);
  Body()(prototype, name, 0);
}

decorateMethod([Post('bare'), HttpCode(201)], 'bare');
decorateMethod([Post('idem'), HttpCode(201), Idempotent()], 'idem');
Controller()(PeerBenchController);

class PeerBenchModule {}
Module({
  imports: [
    NodeIdempotencyModule.forRootAsync({
      storage: { adapter: 'redis', options: { url: `redis://127.0.0.1:${redisPort}` } },
      cacheKeyPrefix: process.env.BENCH_KEY_PREFIX ?? 'node-idempotency',
    }),
  ],
  controllers: [PeerBenchController],
})(PeerBenchModule);

const app =
  platform === 'fastify'
    ? await NestFactory.create(PeerBenchModule, new FastifyAdapter(), { logger: ['error'] })
    : await NestFactory.create(PeerBenchModule, { logger: ['error'] });
await app.listen(0, '127.0.0.1');
process.once('SIGTERM', () => {
  void app.close().finally(() => process.exit(0));
});
announceListening(app.getHttpServer().address().port);
