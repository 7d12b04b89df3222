// The fault scenarios and the soak. Each returns what `Ledger.verify` needs plus its own checks;
// loops are bounded by time or count, and every fault is counted in `row.faults`.
import { redisCli, waitUntilClusterOk } from '@oncely/testing-kit';
import { LeaseLostError } from '@oncely/core';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { rabbitmqConsumerKill } from './rabbitmq-consumer-kill.mjs';
import { run, scenario, sleep } from './scenario-kit.mjs';
import { newOperation, pick } from './traffic.mjs';

/**
 * Keeps `concurrency` clients busy for `ms`: new operations of `kinds`, and duplicates at
 * `duplicateRate` (half sent concurrently to another process, half later retries).
 */
async function load(ctx, { ms, kinds, latencyMs, concurrency = 6, duplicateRate = 0.1 }) {
  const { fleet, ledger } = ctx;
  const done = Date.now() + ms;
  const history = [];
  const latency = () => (Array.isArray(latencyMs) ? pick(latencyMs) : latencyMs);
  const nodes = () => fleet.alive();
  async function client() {
    while (Date.now() < done) {
      const live = nodes();
      if (live.length === 0) {
        await sleep(100);
        continue;
      }
      const roll = Math.random();
      if (roll < duplicateRate / 2 && history.length > 0) {
        await ledger.send(pick(live), pick(history), { latencyMs: latency() });
        continue;
      }
      const operation = newOperation(pick(kinds), run);
      history.push(operation);
      if (roll < duplicateRate) {
        const [a, b] = [pick(live), pick(live)];
        await Promise.all([
          ledger.send(a, operation, { latencyMs: latency() }),
          sleep(5).then(() => ledger.send(b, operation, { latencyMs: latency() })),
        ]);
      } else {
        await ledger.send(pick(live), operation, { latencyMs: latency() });
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, client));
}

const settle = (ctx) => ctx.ledger.settle(() => ctx.fleet.alive(), { deadlineMs: 60_000 });
const DURABLE = ['order', 'payment', 'summary'];

export const scenarios = {
  /** A process SIGKILLed mid-handler (800 ms handlers), three times, under load; restarted each time. */
  'leader-kill': () =>
    scenario(
      'leader-kill',
      { env: { CHAOS_LEASE_TTL_MS: '2000', CHAOS_WAIT_MS: '8000' } },
      async (ctx) => {
        ctx.ledger.allowConnectionLoss = true;
        const killer = (async () => {
          for (let round = 0; round < 3; round++) {
            await sleep(2_500);
            const victim = round % 3;
            await ctx.fleet.kill(victim);
            ctx.row.faults += 1;
            await ctx.fleet.restart(victim);
          }
        })();
        const traffic = (async () => {
          while (ctx.row.faults < 3) await load(ctx, { ms: 2_000, kinds: DURABLE, latencyMs: 800 });
        })();
        await Promise.all([killer, traffic]);
        await settle(ctx);
        return {
          kinds: DURABLE,
          exactExecutions: [],
          notes: `${ctx.fleet.restarts} restarts`,
        };
      },
    ),

  /** The Redis server SIGKILLed and started again (empty) mid-traffic, twice. */
  'redis-restart': () =>
    scenario('redis-restart', {}, async (ctx) => {
      const [redis] = ctx.servers;
      const faults = (async () => {
        for (let i = 0; i < 2; i++) {
          await sleep(3_000);
          await redis.stop();
          ctx.row.faults += 1;
          await sleep(1_500);
          await redis.start();
        }
      })();
      await Promise.all([faults, load(ctx, { ms: 11_000, kinds: DURABLE, latencyMs: 100 })]);
      await settle(ctx);
      return { kinds: DURABLE, exactExecutions: DURABLE };
    }),

  /** `CLIENT PAUSE 5000 ALL` with a 2 s lease, twice, mid-traffic (SingleFlight routes included). */
  'redis-pause': () =>
    scenario(
      'redis-pause',
      { env: { CHAOS_LEASE_TTL_MS: '2000', CHAOS_WAIT_MS: '8000' } },
      async (ctx) => {
        const [redis] = ctx.servers;
        const faults = (async () => {
          for (let i = 0; i < 2; i++) {
            await sleep(2_000);
            await redisCli(redis.port, 'CLIENT', 'PAUSE', '5000', 'ALL');
            ctx.row.faults += 1;
            await sleep(5_500);
          }
        })();
        const kinds = [...DURABLE, 'report'];
        await Promise.all([faults, load(ctx, { ms: 15_000, kinds, latencyMs: 300 })]);
        await settle(ctx);
        // Reports are SingleFlight only: with the coordinator unreachable they fail open (run
        // uncoordinated) by design, so for them only "at least once, never an unclear answer" holds.
        return { kinds, exactExecutions: DURABLE, oneResult: DURABLE };
      },
    ),

  /** pg_terminate_backend on the connections running oncely's begin / complete statements. */
  'pg-terminate': () =>
    scenario('pg-terminate', {}, async (ctx) => {
      const phases = {};
      let stop = false;
      const killer = (async () => {
        while (!stop && ctx.row.faults < 24) {
          const { rows } = await ctx.admin.query(
            `SELECT pid, query, state FROM pg_stat_activity
              WHERE datname = $1 AND pid <> pg_backend_pid()
                AND query ILIKE '%oncely_idempotency_record%'
                AND (state = 'active' OR state = 'idle in transaction')`,
            [ctx.database],
          );
          const victim = rows[0];
          if (victim) {
            const phase = /^\s*insert/i.test(victim.query)
              ? 'begin'
              : /^\s*update/i.test(victim.query)
                ? 'complete/renew'
                : 'other';
            const { rows: done } = await ctx.admin.query('SELECT pg_terminate_backend($1) AS ok', [
              victim.pid,
            ]);
            if (done[0]?.ok) {
              ctx.row.faults += 1;
              phases[phase] = (phases[phase] ?? 0) + 1;
              await sleep(300);
            }
          } else {
            await sleep(5);
          }
        }
      })();
      await load(ctx, { ms: 12_000, kinds: DURABLE, latencyMs: 100 });
      stop = true;
      await killer;
      await settle(ctx);
      return {
        kinds: DURABLE,
        exactExecutions: [],
        notes: Object.entries(phases)
          .map(([p, n]) => `${p}:${n}`)
          .join(' '),
      };
    }),

  /**
   * 1.2 s leases, 3 s handlers: the watchdog must hold the lease (duplicates sent 2 s in, after
   * it would have expired without renewal, still see it held). Then, at the store level, a
   * leader whose renewal is blocked: its lease expires, another owner takes over, and fencing
   * refuses the stale commit.
   */
  'lease-short': () =>
    scenario(
      'lease-short',
      { env: { CHAOS_LEASE_TTL_MS: '1200', CHAOS_WAIT_MS: '9000' } },
      async (ctx) => {
        const [first, ...others] = ctx.fleet.nodes;
        const operations = DURABLE.flatMap((kind) => [0, 1, 2].map(() => newOperation(kind, run)));
        await Promise.all(
          operations.flatMap((op) => [
            ctx.ledger.send(first, op, { latencyMs: 3_000 }),
            sleep(2_000).then(() => ctx.ledger.send(pick(others), op, { latencyMs: 3_000 })),
          ]),
        );
        await settle(ctx);
        const fencing = await staleLeaderIsFenced(ctx);
        ctx.row.faults += fencing.faults;
        const ran = Object.values(ctx.fleet.executions()).reduce((sum, n) => sum + n, 0);
        return {
          kinds: DURABLE,
          // Not exact: an event loop stalled longer than the lease (this box is shared) loses
          // it; the leader then gets 503 lease-lost and its work is fenced off, and the new
          // leader runs it again. Rows and results stay exact either way.
          exactExecutions: [],
          failures: fencing.failures,
          notes: `${ran} executions for ${operations.length} operations (re-runs = leases lost to stalls); ${fencing.notes}`,
        };
      },
    ),

  /** A 3-master Redis Cluster; one master SIGKILLed and restarted (empty) mid-traffic, twice. */
  'cluster-restart': () =>
    scenario('cluster-restart', { redis: 'cluster' }, async (ctx) => {
      const faults = (async () => {
        for (let i = 0; i < 2; i++) {
          await sleep(3_000);
          const master = ctx.servers[i % 3];
          await master.stop();
          ctx.row.faults += 1;
          await sleep(1_500);
          await master.start();
          await waitUntilClusterOk(ctx.servers, 30_000);
        }
      })();
      const kinds = [...DURABLE, 'report'];
      await Promise.all([faults, load(ctx, { ms: 12_000, kinds, latencyMs: 100 })]);
      await settle(ctx);
      // A restarted master comes back empty: cached report results on its slots are gone, so a
      // later report retry runs again (a cache, not a record); durable routes must not.
      return { kinds, exactExecutions: DURABLE, oneResult: DURABLE };
    }),

  /** RabbitMQ consumers SIGKILLed after their record completed, before their ack, three times. */
  'rabbitmq-consumer-kill': rabbitmqConsumerKill,

  /** ≥ 60 s, 3 processes, 10 % duplicates, all four routes; memory sampled every 5 s. */
  soak: () =>
    scenario('soak', {}, async (ctx) => {
      const kinds = ['order', 'order', 'payment', 'payment', 'summary', 'report'];
      const samples = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          await sleep(5_000);
          samples.push(ctx.fleet.memory());
        }
      })();
      // 11 % of iterations duplicate (a concurrent pair is 2 requests, 1 duplicate): ~10 % of requests.
      await load(ctx, {
        ms: 62_000,
        kinds,
        latencyMs: [5, 20, 50, 100],
        concurrency: 12,
        duplicateRate: 0.11,
      });
      sampling = false;
      await sampler;
      await settle(ctx);
      const memory = memoryVerdict(samples);
      return {
        kinds: ['order', 'payment', 'summary', 'report'],
        exactExecutions: ['order', 'payment', 'summary', 'report'],
        failures: memory.failures,
        notes: memory.notes,
      };
    }),
};

/**
 * Memory is flat when, per process, the largest heap in the last third of the run is within
 * 50 % (+ 16 MB of slack) of the largest in the first third (after warm-up), and RSS within +96 MB.
 */
function memoryVerdict(samples) {
  const failures = [];
  const notes = [];
  const third = Math.max(1, Math.floor(samples.length / 3));
  const MB = 1024 * 1024;
  for (let p = 0; p < 3; p++) {
    const series = samples.map((s) => s[p]).filter(Boolean);
    if (series.length < 3) {
      failures.push(`memory: only ${series.length} samples for process ${p}`);
      continue;
    }
    const early = series.slice(0, third);
    const late = series.slice(-third);
    const max = (list, field) => Math.max(...list.map((s) => s[field]));
    const [heapEarly, heapLate] = [max(early, 'heapUsed'), max(late, 'heapUsed')];
    const [rssEarly, rssLate] = [max(early, 'rss'), max(late, 'rss')];
    notes.push(
      `p${p} heap ${(heapEarly / MB).toFixed(0)}→${(heapLate / MB).toFixed(0)} MB rss ${(rssEarly / MB).toFixed(0)}→${(rssLate / MB).toFixed(0)} MB`,
    );
    if (heapLate > heapEarly * 1.5 + 16 * MB) failures.push(`memory: heap grew on process ${p}`);
    if (rssLate > rssEarly + 96 * MB) failures.push(`memory: RSS grew on process ${p}`);
  }
  return { failures, notes: notes.join('; ') };
}

/** Store-level: renewal blocked (never called), lease expired, takeover, stale commit fenced. */
async function staleLeaderIsFenced(ctx) {
  const failures = [];
  const source = () =>
    new DataSource(withIdempotencyRecords({ type: 'postgres', url: ctx.url, poolSize: 2 }));
  const [a, b] = [source(), source()];
  await Promise.all([a.initialize(), b.initialize()]);
  try {
    await a.query('CREATE TABLE chaos_fenced (id text PRIMARY KEY, owner text NOT NULL)');
    const stale = new TypeOrmIdempotencyRecordStore(a);
    const fresh = new TypeOrmIdempotencyRecordStore(b);
    const timing = { leaseTtlMs: 300, retentionMs: 60_000 };
    const response = (owner) => ({
      status: 201,
      headers: {},
      body: { kind: 'json', value: { owner } },
    });
    const insert = (manager, id, owner) =>
      manager.query('INSERT INTO chaos_fenced (id, owner) VALUES ($1, $2)', [id, owner]);
    let faults = 0;

    // 1. The stale leader's lease expires before it commits: its whole transaction is refused.
    const identity = `chaos:fence:v1:t:${run}-1`;
    const old = await stale.begin(identity, 'd'.repeat(64), timing);
    await sleep(500);
    faults += 1;
    const current = await fresh.begin(identity, 'd'.repeat(64), timing);
    if (old.kind !== 'acquired' || current.kind !== 'acquired') {
      failures.push(`fencing: expected two acquisitions, got ${old.kind} then ${current.kind}`);
      return { failures, faults, notes: '' };
    }
    if (current.lease.fence !== old.lease.fence + 1)
      failures.push('fencing: fence not bumped on takeover');
    if (await stale.renew(old.lease, 300)) failures.push('fencing: stale renew succeeded');
    const staleCommit = await stale
      .runInTransaction(old.lease, async (manager) => {
        await insert(manager, identity, 'stale');
        return { response: response('stale'), result: 'stale' };
      })
      .then(
        () => 'committed',
        (error) => (error instanceof LeaseLostError ? 'lease-lost' : `error ${error}`),
      );
    if (staleCommit !== 'lease-lost') failures.push(`fencing: stale commit ${staleCommit}`);
    const staleComplete = await stale.complete(old.lease, response('stale')).then(
      () => 'completed',
      (error) => (error instanceof LeaseLostError ? 'lease-lost' : `error ${error}`),
    );
    if (staleComplete !== 'lease-lost') failures.push(`fencing: stale complete ${staleComplete}`);
    await fresh.runInTransaction(current.lease, async (manager) => {
      await insert(manager, identity, 'fresh');
      return { response: response('fresh'), result: 'fresh' };
    });

    // 2. The lease expires while the stale leader's transaction runs: exactly one row either way.
    const identity2 = `chaos:fence:v1:t:${run}-2`;
    const old2 = await stale.begin(identity2, 'e'.repeat(64), timing);
    if (old2.kind !== 'acquired') throw new Error(`fencing: got ${old2.kind}`);
    const slow = stale
      .runInTransaction(old2.lease, async (manager) => {
        await insert(manager, identity2, 'stale');
        await sleep(800);
        return { response: response('stale'), result: 'stale' };
      })
      .then(
        () => 'committed',
        (error) => (error instanceof LeaseLostError ? 'lease-lost' : `error ${error}`),
      );
    await sleep(500);
    faults += 1;
    const during = await fresh.begin(identity2, 'e'.repeat(64), timing);
    if (during.kind === 'acquired') {
      await fresh
        .runInTransaction(during.lease, async (manager) => {
          await insert(manager, identity2, 'fresh');
          return { response: response('fresh'), result: 'fresh' };
        })
        .catch(() => undefined);
    }
    const slowOutcome = await slow;
    const { rows } = await ctx.db.query('SELECT id, owner FROM chaos_fenced ORDER BY id');
    const owners = rows.map((r) => `${r.id === identity ? 1 : 2}:${r.owner}`);
    if (owners.length !== 2 || owners[0] !== '1:fresh') {
      failures.push(`fencing: business rows ${owners.join(',')}`);
    }
    const replay = await fresh.begin(identity2, 'e'.repeat(64), timing);
    if (replay.kind !== 'replay') failures.push(`fencing: case 2 ends ${replay.kind}, not replay`);
    return {
      failures,
      faults,
      notes: `stale commit: ${staleCommit}; expiry mid-transaction: takeover ${during.kind}, stale ${slowOutcome}, rows ${owners.join(',')}`,
    };
  } finally {
    await Promise.all([a.destroy(), b.destroy()]);
  }
}
