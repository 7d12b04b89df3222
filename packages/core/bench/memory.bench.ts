/**
 * Retained memory of SingleFlight: 1 000 000 distinct keys through a `@SingleFlight`-style route
 * on the in-memory engine (coordinator and store left to their defaults, default TTLs: results
 * stay cached 30 s), driven as the framework integrations drive it. Prints the heap after a
 * forced GC before and after the run, and the peak in between.
 * Run: `npm run bench:memory` (needs --expose-gc, which the script passes; it asserts nothing).
 * `BENCH_MEMORY_KEYS` and `BENCH_MEMORY_CONCURRENCY` change the run.
 */
import { loadavg } from 'node:os';
import { createOncelyEngine, InMemoryFlightCoordinator } from '@oncely/core';
import { resolveCallKeys, type HttpResponse } from '@oncely/core/adapter';

const KEYS = Number(process.env.BENCH_MEMORY_KEYS ?? 1_000_000);
const CONCURRENCY = Number(process.env.BENCH_MEMORY_CONCURRENCY ?? 64);
/** The aim for the heap a million distinct keys leave behind. */
const AIM_BYTES = 64 * 1024 * 1024;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  throw new Error('Run the memory benchmark with --expose-gc (npm run bench:memory does).');
}

const engine = createOncelyEngine({ namespace: 'bench', tracing: false });
const coordinator = engine.coordinator as InMemoryFlightCoordinator;
const route = engine.defineRoute('MemoryBench.render', {
  singleFlight: { operation: 'bench-memory', target: 'params.id', input: [] },
});

async function call(id: string): Promise<void> {
  await engine.executor.execute({
    route,
    keys: resolveCallKeys(route, { params: { id }, headers: {} }),
    handler: async (): Promise<HttpResponse> => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { kind: 'json', value: { id, rendered: `report ${id}` } },
    }),
  });
}

let peak = 0;

/**
 * Runs `count` calls, `CONCURRENCY` at a time. They settle as microtasks, so no timer would fire
 * meanwhile: the peak is sampled between calls instead.
 */
async function drive(prefix: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        if (next % 10_000 === 0) {
          peak = Math.max(peak, process.memoryUsage().heapUsed);
        }
        await call(`${prefix}-${next++}`);
      }
    }),
  );
}

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

await engine.start();
await drive('warmup', Math.min(20_000, KEYS));
const before = await settledHeap();
peak = before;
const startedAt = performance.now();
await drive('measured', KEYS);
const seconds = (performance.now() - startedAt) / 1000;
const after = await settledHeap();
const retained = after - before;

console.log(
  `node ${process.version}; load ${loadavg()[0]?.toFixed(1)}; ${KEYS.toLocaleString('en-US')} distinct keys, ` +
    `${CONCURRENCY} at a time, default TTLs; ${Math.round(KEYS / seconds).toLocaleString('en-US')} keys/s`,
);
console.log(
  `heap after GC: ${mb(before)} before, ${mb(after)} after (peak ${mb(peak)}); ` +
    `coordinator holds ${coordinator.size.toLocaleString('en-US')} keys`,
);
console.log(
  `\nretained: ${mb(retained)}, ${Math.round(retained / KEYS)} bytes per key of the run ` +
    `(aim < ${mb(AIM_BYTES)}: ${retained < AIM_BYTES ? 'met' : 'NOT met'})`,
);
await engine.close();
