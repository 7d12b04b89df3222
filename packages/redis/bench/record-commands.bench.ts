/**
 * Redis work per idempotent call of RedisIdempotencyRecordStore, on a redis-server of its own
 * (so `INFO commandstats` counts nothing else):
 *
 *   npm run build && npx tsx packages/redis/bench/record-commands.bench.ts [calls]
 *
 * For a miss (begin + complete on a fresh identity) and a replay (begin on a completed one), it
 * prints per call: the commands scripts ran inside Redis (TIME, SET, GET, …), the round trips
 * (EVALSHA), the Redis CPU the scripts took (`usec` of commandstats, inner commands included)
 * and the server's whole CPU (`used_cpu_user` + `used_cpu_sys`, network and parsing included).
 * BENCH_STORE_MODULE=<path> measures another build of the store (e.g. an older checkout's
 * `src/record/redis-idempotency-record.store.ts`) for a before/after comparison.
 */
import { Redis } from 'ioredis';
import type { StoredResponse } from '@oncely/core';
import { startRedisServer, stopAllRedisServers } from '@oncely/testing-kit';

interface Store {
  begin(
    identity: string,
    digest: string,
    options: object,
  ): Promise<{ kind: string; lease?: unknown }>;
  complete(lease: unknown, response: StoredResponse): Promise<void>;
  close(): Promise<void>;
}
type StoreClass = new (client: Redis, options: object) => Store;

const calls = Number(process.argv[2] ?? 2000);
const options = { leaseTtlMs: 30_000, retentionMs: 120_000 };
const response: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value: { id: 'order-77', amount: '100.00', currency: 'EUR' } },
};

interface Stats {
  readonly commands: Record<string, { calls: number; usec: number }>;
  readonly cpuUsec: number;
}

async function stats(client: Redis): Promise<Stats> {
  const info = (await client.info('commandstats')) + (await client.info('cpu'));
  const commands: Stats['commands'] = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    commands[match[1]!] = { calls: Number(match[2]), usec: Number(match[3]) };
  }
  const cpu = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
  return { commands, cpuUsec: (cpu('used_cpu_user') + cpu('used_cpu_sys')) * 1e6 };
}

function report(name: string, samples: readonly [Stats, Stats][], count: number): void {
  const scripted: string[] = [];
  let inner = 0;
  let trips = 0;
  const [before, after] = samples[0]!;
  for (const [command, { calls: total }] of Object.entries(after.commands)) {
    const added = total - (before.commands[command]?.calls ?? 0);
    if (added <= 0 || command === 'info') continue;
    if (command === 'evalsha' || command === 'eval') trips += added;
    else {
      inner += added;
      scripted.push(`${command} ${(added / count).toFixed(2)}`);
    }
  }
  const scriptUsec = samples.map(([from, to]) => {
    let usec = 0;
    for (const command of ['evalsha', 'eval']) {
      usec += (to.commands[command]?.usec ?? 0) - (from.commands[command]?.usec ?? 0);
    }
    return usec / count;
  });
  const cpuUsec = samples.map(([from, to]) => (to.cpuUsec - from.cpuUsec) / count);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  console.log(
    `${name.padEnd(30)} ${(inner / count).toFixed(2)} commands in scripts (${scripted.join(', ')}), ` +
      `${(trips / count).toFixed(2)} round trips; µs in scripts min ${Math.min(...scriptUsec).toFixed(2)} ` +
      `median ${median(scriptUsec).toFixed(2)}; server CPU µs min ${Math.min(...cpuUsec).toFixed(2)}`,
  );
}

const modulePath = process.env.BENCH_STORE_MODULE ?? '@oncely/redis';
const { RedisIdempotencyRecordStore } = (await import(modulePath)) as {
  RedisIdempotencyRecordStore: StoreClass;
};
const server = await startRedisServer();
const client = new Redis({ host: server.host, port: server.port });
try {
  console.log(`${modulePath}: ${calls} calls each, redis-server :${server.port}`);
  for (const [label, storeOptions] of [
    ['default', {}],
    ['nearCache: false', { nearCache: false }],
  ] as const) {
    const store = new RedisIdempotencyRecordStore(client, storeOptions);
    const run = async (identity: (i: number) => string, count = calls) => {
      for (let i = 0; i < count; i++) {
        const outcome = await store.begin(identity(i), 'digest', options);
        if (outcome.kind === 'acquired') await store.complete(outcome.lease, response);
      }
    };
    await run((i) => `shop:order:v1:t:warm-${label}-${i}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Ten batches each: the lowest µs per call is the one least disturbed by other processes on
    // a busy machine (command counts are exact in every batch).
    const batch = Math.ceil(calls / 10);
    for (const phase of ['miss', 'replay'] as const) {
      const samples: [Stats, Stats][] = [];
      for (let b = 0; b < 10; b++) {
        const before = await stats(client);
        await run((i) => `shop:order:v1:t:miss-${label}-${b * batch + (i % batch)}`, batch);
        samples.push([before, await stats(client)]);
      }
      report(`${label}: ${phase}`, samples, batch);
    }
    await store.close();
  }
} finally {
  await client.quit();
  await stopAllRedisServers();
}
