/**
 * What one protected call costs oncely itself, framework and network aside: request context to
 * response through `resolveCallKeys` and `ProtectedCallExecutor` on the embedded engines, for a
 * cached SingleFlight hit, an idempotent replay and an idempotent first call, against calling
 * the handler alone, in alternating rounds of the same run.
 * Run: `npm run bench:calls` (not a test: it prints figures, it asserts nothing).
 *
 * CPU time on a shared machine wobbles by tens of per cent; instruction counts repeat within a
 * few (JIT and GC timing aside), whatever else the machine runs:
 *   BENCH_CALLS_ONLY='idempotent replay' BENCH_CALLS_ITERATIONS=2000 valgrind --tool=callgrind \
 *     --callgrind-out-file=/dev/null node --single-threaded --import tsx packages/core/bench/calls.bench.ts
 * with two iteration counts: the difference divided by the extra calls is the cost of one call.
 */
import { loadavg } from 'node:os';
import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  type KeyContext,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
  type HttpResponse,
  type ProtectedRoute,
} from '@oncely/core/adapter';

const ROUNDS = 7;
const ITERATIONS = Number(process.env.BENCH_CALLS_ITERATIONS ?? 50_000);

const defaults = { ...DEFAULT_PROTECTION, namespace: 'bench' };
const idempotent = defineProtectedRoute(
  'Orders.create',
  { idempotent: { operation: 'order-create', scope: 'headers.x-tenant' } },
  defaults,
);
const singleFlight = defineProtectedRoute(
  'Orders.quote',
  { singleFlight: { operation: 'order-quote', scope: 'headers.x-tenant' } },
  defaults,
);
const executor = new ProtectedCallExecutor(
  createProtectionEngines({
    coordinator: new InMemoryFlightCoordinator(),
    store: new InMemoryIdempotencyRecordStore(),
    // One listener, as a service with metrics has: events are built and delivered.
    events: [() => undefined],
  }),
);

/** The headers Node hands a JSON POST, plus the tenant and the client key. */
function context(clientKey: string): KeyContext {
  return {
    body: { customer: 'c-1001', amount: '100.00', currency: 'EUR' },
    params: {},
    query: {},
    headers: {
      host: '127.0.0.1:3000',
      connection: 'keep-alive',
      'content-type': 'application/json',
      'content-length': '56',
      'x-tenant': 'tenant-7',
      'idempotency-key': clientKey,
    },
    user: undefined,
  };
}

let accepted = 0;
async function handler(): Promise<HttpResponse> {
  accepted += 1;
  return {
    status: 201,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: { kind: 'json', value: { orderId: accepted, status: 'accepted' } },
  };
}

const call = (route: ProtectedRoute, clientKey: string) =>
  executor.execute({ route, keys: resolveCallKeys(route, context(clientKey)), handler });

let fresh = 0;
const candidates: Record<string, () => Promise<unknown>> = {
  'handler alone': () => handler(),
  'SingleFlight, cached hit': () => call(singleFlight, 'unused'),
  'idempotent replay': () => call(idempotent, 'replayed-key'),
  'idempotent first call (record written)': () => call(idempotent, `fresh-${(fresh += 1)}`),
};
const only = process.env.BENCH_CALLS_ONLY;
const chosen = Object.entries(candidates).filter(([name]) => !only || name === only);
if (chosen.length === 0) {
  throw new Error(
    `BENCH_CALLS_ONLY="${only}" names no case; use one of: ${Object.keys(candidates).join(', ')}.`,
  );
}

/** Calls per second of CPU time (user + system) of this process, one call at a time. */
async function round(run: () => Promise<unknown>, iterations: number): Promise<number> {
  const started = process.cpuUsage();
  for (let n = 0; n < iterations; n++) await run();
  const used = process.cpuUsage(started);
  return iterations / ((used.user + used.system) / 1e6);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

console.log(
  only
    ? `node ${process.version}; ${ITERATIONS} calls of '${only}', no warm-up`
    : `node ${process.version}; load ${loadavg()[0]?.toFixed(1)}; ${ROUNDS} alternating rounds of ${ITERATIONS} after warm-up`,
);
if (only) {
  const rate = await round(chosen[0]![1], ITERATIONS);
  console.log(`${only}: ${(1e6 / rate).toFixed(2)} µs of CPU per call`);
} else {
  for (const [, run] of chosen) await round(run, Math.ceil(ITERATIONS / 2));
  const rates = new Map<string, number[]>(chosen.map(([name]) => [name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of chosen) rates.get(name)?.push(await round(run, ITERATIONS));
  }
  const handlerAlone = median(rates.get('handler alone') ?? []);
  for (const [name, values] of rates) {
    const rate = median(values);
    const addedUs = 1e6 / rate - 1e6 / handlerAlone;
    console.log(
      `${name.padEnd(40)} ${(1e6 / rate).toFixed(2).padStart(7)} µs of CPU per call` +
        (name === 'handler alone' ? '' : `  (+${addedUs.toFixed(2)} µs over the handler alone)`),
    );
  }
}
