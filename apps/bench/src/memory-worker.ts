/**
 * Run by the `memory` scenario with --expose-gc: `keys` distinct keys through a `@SingleFlight`
 * route (`resultTtl: 0`) on the Redis coordinator, driven the way the Nest interceptor drives it
 * (core's engine, route defined once, keys built from the request context, the executor runs the
 * handler).
 * Prints one JSON line: heap after a forced GC before and after, and the peak in between.
 */
import { createOncelyEngine } from '@oncely/core';
import { resolveCallKeys, type HttpResponse } from '@oncely/core/adapter';
import { RedisFlightCoordinator } from '@oncely/redis';

const keys = Number(process.env.BENCH_MEMORY_KEYS ?? 1_000_000);
const concurrency = Number(process.env.BENCH_MEMORY_CONCURRENCY ?? 64);
const redis = { host: '127.0.0.1', port: Number(process.env.BENCH_REDIS_PORT ?? 6379) };
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('Run the memory worker with --expose-gc.');

const engine = createOncelyEngine({
  namespace: 'bench',
  coordinator: new RedisFlightCoordinator(redis, {
    keyPrefix: process.env.BENCH_KEY_PREFIX ?? 'oncely-bench:',
  }),
  allowInMemory: true,
  owner: 'memory-worker',
});
const route = engine.defineRoute('MemoryBench.render', {
  singleFlight: { operation: 'bench-memory', target: 'params.id', input: [], resultTtl: 0 },
});

async function call(id: string): Promise<void> {
  const keys = resolveCallKeys(route, { params: { id }, headers: {} });
  await engine.executor.execute({
    route,
    keys,
    handler: async (): Promise<HttpResponse> => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { kind: 'json', value: { id } },
    }),
  });
}

async function drive(prefix: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const id = `${prefix}-${next++}`;
        await call(id);
      }
    }),
  );
}

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

await drive('warmup', Math.min(20_000, keys));
const before = await settledHeap();
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().heapUsed);
}, 250);
const startedAt = performance.now();
await drive('measured', keys);
const seconds = (performance.now() - startedAt) / 1000;
clearInterval(sampler);
const after = await settledHeap();
await engine.close();
process.stdout.write(
  `${JSON.stringify({ keys, concurrency, seconds, heapBefore: before, heapAfter: after, heapPeak: peak })}\n`,
);
