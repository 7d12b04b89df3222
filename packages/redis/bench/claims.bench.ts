/**
 * What shared claims cost an app on Redis: the boot-time registration of every claim of an app
 * with many routes (idempotency claims with the store, SingleFlight claims with the coordinator),
 * a renewal (one heartbeat), and the withdrawal on close. Run: `npx tsx
 * packages/redis/bench/claims.bench.ts` (prints figures, asserts nothing).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createOncelyEngine } from '@oncely/core';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { services } from '@oncely/testing-kit';

const ROUTES = 50;
const ROUNDS = 5;

const url = `redis://${services.redis.host}:${services.redis.port}`;
const figures: { register: number; renew: number; withdraw: number }[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  const keyPrefix = `oncely-bench-claims-${randomUUID().slice(0, 8)}:`;
  const store = new RedisIdempotencyRecordStore(url, { keyPrefix });
  const coordinator = new RedisFlightCoordinator(url, { keyPrefix });
  await coordinator.connect();
  const engine = createOncelyEngine({
    namespace: 'bench',
    service: 'bench-api',
    store,
    coordinator,
  });
  for (let i = 0; i < ROUTES; i += 1) {
    const options = { operation: `op-${i}`, scope: 'user.id' };
    engine.defineRoute(`Bench.op${i}`, { idempotent: options, singleFlight: options });
  }
  let started = performance.now();
  await engine.registerClaims();
  const register = performance.now() - started;
  started = performance.now();
  await store.claimRegistry().announce({
    instance: 'bench-renewal',
    claims: engine.claims().filter(({ mechanism }) => mechanism === 'idempotency'),
    ttlMs: 30_000,
  });
  await coordinator.claimRegistry().announce({
    instance: 'bench-renewal',
    claims: engine.claims().filter(({ mechanism }) => mechanism === 'single-flight'),
    ttlMs: 30_000,
  });
  const renew = performance.now() - started;
  started = performance.now();
  await engine.withdrawClaims();
  const withdraw = performance.now() - started;
  await store.claimRegistry().withdraw('bench-renewal', engine.claims());
  await coordinator.claimRegistry().withdraw('bench-renewal', engine.claims());
  await engine.close();
  figures.push({ register, renew, withdraw });
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (key: keyof (typeof figures)[number]) => median(figures.map((f) => f[key])).toFixed(1);
console.log(
  `${ROUTES * 2} claims (${ROUTES} routes, both mechanisms), median of ${ROUNDS}: register ${ms('register')} ms, renew ${ms('renew')} ms, withdraw ${ms('withdraw')} ms`,
);
