/**
 * SingleFlight on Redis against a naive polling implementation (SET NX lease, GET every 50 ms),
 * measured in the same run on the same Redis. Prints flights per second on the leader path
 * (distinct keys), the hit path (one cached key) and the follower path (1 leader + followers on
 * other engines per key), and how long followers take to get the result once the leader's work
 * returned. Then counts the Redis commands of a miss and a hit on a redis-server of its own
 * (`INFO commandstats` deltas, which include the commands Lua scripts run). Run:
 * `npm run bench:flight` (prints figures, asserts nothing).
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { SingleFlight } from '@oncely/core';
import { RedisFlightCoordinator } from '@oncely/redis';
import { services, startRedisServer, stopAllRedisServers } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { NaivePollingFlight } from './naive-polling-flight.js';

const LEADER_FLIGHTS = 4_000;
const HIT_FLIGHTS = 10_000;
const CONCURRENCY = 50;
const FOLLOWER_ROUNDS = 300;
const FOLLOWERS_PER_ROUND = 4;
const ROUNDS_IN_PARALLEL = 10;
const LEADER_WORK_MS = 10;
const ROUNDS = 3;

interface Runner {
  run<T>(key: string, work: () => Promise<T>): Promise<{ value: T; source: string }>;
}

interface Figures {
  leader: number;
  hit: number;
  follower: number;
  wakeP50: number;
  wakeP99: number;
}

const prefix = `oncely-bench:${randomUUID().slice(0, 8)}:`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const payload = { status: 'ok', total: '129.90', items: [1, 2, 3], at: '2024-01-01T00:00:00Z' };

/** Runs `count` tasks, at most `concurrency` at a time; returns tasks per second. */
async function throughput(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
) {
  let next = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
  return count / ((performance.now() - startedAt) / 1000);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))]!;
}

/**
 * `engines(n)` gives n independent runners (separate engines, as separate servers would be), so
 * concurrent calls on one key reach Redis instead of joining in memory.
 */
async function measure(label: string, engines: (n: number) => Runner[]): Promise<Figures> {
  const tag = `${label}:${randomUUID().slice(0, 6)}`;
  const [leaderEngine] = engines(1);
  const leader = await throughput(LEADER_FLIGHTS, CONCURRENCY, (i) =>
    leaderEngine!.run(`${tag}:leader:${i}`, async () => payload),
  );

  const hitKey = `${tag}:hit`;
  await leaderEngine!.run(hitKey, async () => payload);
  const hitEngines = engines(CONCURRENCY);
  let turn = 0;
  const hit = await throughput(HIT_FLIGHTS, CONCURRENCY, () =>
    hitEngines[turn++ % CONCURRENCY]!.run(hitKey, async () => payload),
  );

  const wakeups: number[] = [];
  const followerEngines = engines(FOLLOWERS_PER_ROUND + 1);
  const rounds = await throughput(FOLLOWER_ROUNDS, ROUNDS_IN_PARALLEL, async (i) => {
    const key = `${tag}:follow:${i}`;
    let workDone = 0;
    let started!: () => void;
    const leading = new Promise<void>((resolve) => (started = resolve));
    const leaderRun = followerEngines[0]!.run(key, async () => {
      started();
      await sleep(LEADER_WORK_MS);
      workDone = performance.now();
      return payload;
    });
    await leading;
    await Promise.all(
      followerEngines.slice(1).map(async (engine) => {
        const { source } = await engine.run(key, async () => payload);
        if (source !== 'shared') throw new Error(`${label}: a follower got "${source}"`);
        wakeups.push(performance.now() - workDone);
      }),
    );
    await leaderRun;
  });
  wakeups.sort((a, b) => a - b);
  return {
    leader,
    hit,
    follower: rounds * FOLLOWERS_PER_ROUND,
    wakeP50: percentile(wakeups, 0.5),
    wakeP99: percentile(wakeups, 0.99),
  };
}

function best(all: Figures[]): Figures {
  const median = (pick: (f: Figures) => number) => {
    const values = all.map(pick).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)]!;
  };
  return {
    leader: median((f) => f.leader),
    hit: median((f) => f.hit),
    follower: median((f) => f.follower),
    wakeP50: median((f) => f.wakeP50),
    wakeP99: median((f) => f.wakeP99),
  };
}

const COUNTED_FLIGHTS = 200;

/** Commands per name on `admin`'s server, from `INFO commandstats` (its own INFO left out). */
async function commandstats(admin: Redis): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const [, name, count] of (await admin.info('commandstats')).matchAll(
    /^cmdstat_([^:]+):calls=(\d+)/gm,
  )) {
    if (name !== 'info') calls[name!] = Number(count);
  }
  return calls;
}

/** Commands per flight that `action` (run `COUNTED_FLIGHTS` times) caused on `admin`'s server. */
async function perFlight(admin: Redis, action: (i: number) => Promise<unknown>) {
  const before = await commandstats(admin);
  for (let i = 0; i < COUNTED_FLIGHTS; i++) await action(i);
  const after = await commandstats(admin);
  const perName: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after)) {
    const added = (calls - (before[name] ?? 0)) / COUNTED_FLIGHTS;
    if (added > 0) perName[name] = added;
  }
  const total = Object.values(perName).reduce((sum, calls) => sum + calls, 0);
  const roundTrips = (perName.evalsha ?? 0) + (perName.eval ?? 0);
  return { total, inLua: total - roundTrips, roundTrips, perName };
}

/** Commands per miss and per hit, on a redis-server nobody else uses. */
async function countCommands() {
  const server = await startRedisServer();
  const connection = { host: server.host, port: server.port };
  const admin = new Redis(connection);
  const plain = new RedisFlightCoordinator(connection, { keyPrefix: prefix, nearCache: false });
  const nearCached = new RedisFlightCoordinator(connection, { keyPrefix: prefix });
  await plain.connect();
  await nearCached.connect();
  const flight = new SingleFlight(plain, { resultTtl: 60_000 });
  const nearFlight = new SingleFlight(nearCached, { resultTtl: 60_000 });
  // Scripts are loaded (EVAL) on first use; count EVALSHA runs only.
  await flight.run('warm-up', async () => payload);
  await nearFlight.run('warm-up-near', async () => payload);
  const work = async () => payload;

  const rows = [
    [
      'miss (leader: acquire + complete)',
      await perFlight(admin, (i) => flight.run(`miss:${i}`, work)),
    ],
    [
      'hit from Redis (nearCache: false)',
      await perFlight(admin, (i) => flight.run(`miss:${i}`, work)),
    ],
    ['miss, near cache on', await perFlight(admin, (i) => nearFlight.run(`near:${i}`, work))],
    ['hit, near-cached', await perFlight(admin, (i) => nearFlight.run(`near:${i}`, work))],
  ] as const;
  console.log(
    `\nRedis commands per flight (INFO commandstats, mean of ${COUNTED_FLIGHTS} flights)\n`,
  );
  console.log(
    `${'path'.padEnd(36)}${'total'.padStart(7)}${'in Lua'.padStart(8)}${'trips'.padStart(7)}  commands`,
  );
  for (const [name, counted] of rows) {
    const detail = Object.entries(counted.perName)
      .map(([command, calls]) => `${command} ${calls}`)
      .join(', ');
    console.log(
      `${name.padEnd(36)}${String(counted.total).padStart(7)}${String(counted.inLua).padStart(8)}${String(counted.roundTrips).padStart(7)}  ${detail || '-'}`,
    );
  }
  await plain.close();
  await nearCached.close();
  await admin.quit();
  await stopAllRedisServers();
}

async function main() {
  const redis = new Redis(services.redis);
  const coordinator = new RedisFlightCoordinator(services.redis, { keyPrefix: prefix });
  await coordinator.connect();
  const oncely = (n: number) =>
    Array.from({ length: n }, () => new SingleFlight(coordinator, { resultTtl: 60_000 }));
  const naive = (n: number) =>
    Array.from({ length: n }, () => new NaivePollingFlight(redis, `${prefix}naive:`));

  // Warm-up (JIT, connections, scripts), then alternating rounds; medians are reported.
  await measure('warm-up', oncely);
  await measure('warm-up', naive);
  const results = { oncely: [] as Figures[], naive: [] as Figures[] };
  for (let round = 0; round < ROUNDS; round++) {
    results.oncely.push(await measure('oncely', oncely));
    results.naive.push(await measure('naive', naive));
  }
  const ours = best(results.oncely);
  const theirs = best(results.naive);

  const rows: [string, number, number, 'higher' | 'lower'][] = [
    ['leader path, flights/s (distinct keys)', ours.leader, theirs.leader, 'higher'],
    ['hit path, flights/s (one cached key)', ours.hit, theirs.hit, 'higher'],
    ['follower path, results/s', ours.follower, theirs.follower, 'higher'],
    ['follower wake-up p50, ms', ours.wakeP50, theirs.wakeP50, 'lower'],
    ['follower wake-up p99, ms', ours.wakeP99, theirs.wakeP99, 'lower'],
  ];
  const format = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(2));
  console.log(
    `\nSingleFlight on Redis ${services.redis.host}:${services.redis.port}: median of ${ROUNDS} alternating rounds; ` +
      `concurrency ${CONCURRENCY}; follower rounds: 1 leader + ${FOLLOWERS_PER_ROUND} followers, ` +
      `${LEADER_WORK_MS} ms of work, ${ROUNDS_IN_PARALLEL} keys at a time; load avg ${loadavg()[0]!.toFixed(2)}\n`,
  );
  console.log(
    `${'figure'.padEnd(42)}${'oncely'.padStart(12)}${'naive poll'.padStart(12)}${'ratio'.padStart(10)}`,
  );
  for (const [name, a, b, better] of rows) {
    const ratio = better === 'higher' ? a / b : b / a;
    console.log(
      `${name.padEnd(42)}${format(a).padStart(12)}${format(b).padStart(12)}${`${ratio.toFixed(2)}x`.padStart(10)}`,
    );
  }
  console.log(
    '\nratio: how many times better oncely is (throughput: oncely/naive; latency: naive/oncely)',
  );

  await coordinator.close();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  await redis.quit();

  await countCommands();
}

await main();
