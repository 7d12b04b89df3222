/**
 * Throughput of RedisIdempotencyRecordStore next to bare Redis commands on the same hash shape,
 * measured in the same run against the local Redis:
 *
 *   npx tsx packages/redis/bench/record-store.bench.ts [seconds-per-case] [concurrency]
 *
 * - pairs: begin (acquired) + complete on fresh identities, vs two round trips of pipelined
 *   HSET + PEXPIRE (the same writes, without checks or atomicity);
 * - replays: begin on a completed identity, vs GET of the record (the near cache is off, so
 *   every replay reads Redis).
 * Every case runs twice, alternating with its baseline, and the second round is reported (the
 * first warms up the JIT and the connection). Keys live under a unique prefix, deleted at the end.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { StoredResponse } from '@oncely/core';
import { RedisIdempotencyRecordStore } from '@oncely/redis';
import { services } from '@oncely/testing-kit';
import { deleteKeys } from '../test/support/redis-test-keys.js';

const seconds = Number(process.argv[2] ?? 3);
const concurrency = Number(process.argv[3] ?? 32);
const prefix = `oncely-bench:record:${randomBytes(4).toString('hex')}:`;
const options = { leaseTtlMs: 30_000, retentionMs: 120_000 };
const response: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value: { id: 'order-77', amount: '100.00', currency: 'EUR' } },
};
const body = Buffer.from(JSON.stringify(response.body.kind === 'json' ? response.body.value : ''));

async function measure(name: string, operation: (n: number) => Promise<void>): Promise<number> {
  let next = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await operation(next++);
    }),
  );
  const perSecond = next / ((performance.now() - started) / 1000);
  console.log(`${name.padEnd(44)} ${Math.round(perSecond).toString().padStart(8)} /s`);
  return perSecond;
}

const redis = new Redis({ host: services.redis.host, port: services.redis.port });
const store = new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix, nearCache: false });
try {
  console.log(`concurrency ${concurrency}, ${seconds} s per case, Redis ${services.redis.port}`);
  const completed = await store.begin('bench:replay', 'digest', options);
  if (completed.kind !== 'acquired') throw new Error(`unexpected ${completed.kind}`);
  await store.complete(completed.lease, response);
  const replayKey = store.recordKey(completed.lease.identity);

  let pairs = 0;
  let barePairs = 0;
  let replays = 0;
  let bareReplays = 0;
  for (const round of ['warm-up', 'measured']) {
    console.log(`-- ${round}`);
    pairs = await measure('begin + complete (store)', async (n) => {
      const outcome = await store.begin(`bench:pair:${round}:${n}`, 'digest', options);
      if (outcome.kind !== 'acquired') throw new Error(`unexpected ${outcome.kind}`);
      await store.complete(outcome.lease, response);
    });
    barePairs = await measure('2 × pipelined HSET + PEXPIRE (baseline)', async (n) => {
      const key = `${prefix}{bare-${round}-${n}}:record`;
      await redis
        .pipeline()
        .hset(key, 'digest', 'digest', 'status', 'in_progress', 'owner', 'o', 'fence', n)
        .pexpire(key, 150_000)
        .exec();
      await redis
        .pipeline()
        .hset(key, 'status', 'completed', 'responseStatus', '201', 'body', body)
        .pexpire(key, 120_000)
        .exec();
    });
    replays = await measure('begin → replay (store)', async () => {
      const outcome = await store.begin('bench:replay', 'digest', options);
      if (outcome.kind !== 'replay') throw new Error(`unexpected ${outcome.kind}`);
    });
    bareReplays = await measure('GET of the record (baseline)', async () => {
      await redis.getBuffer(replayKey);
    });
  }
  console.log(
    `ratios: pairs ${(pairs / barePairs).toFixed(2)}× baseline, replays ${(replays / bareReplays).toFixed(2)}× baseline`,
  );
} finally {
  await deleteKeys(redis, prefix);
  await redis.quit();
}
