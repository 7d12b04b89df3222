import type { Platform } from './servers/server-config.js';

/** Durations and sizes of one bench run; every one can be changed through the environment. */
export interface BenchSettings {
  /** Seconds each contender is loaded per round at `connections` (BENCH_DURATION). */
  readonly durationSeconds: number;
  /** Seconds each contender is loaded per round at 1 connection (BENCH_DURATION_1C). */
  readonly latencyDurationSeconds: number;
  /** Unmeasured seconds per contender before the first round (BENCH_WARMUP). */
  readonly warmupSeconds: number;
  /** Rounds of A B C … alternation; medians are taken over them (BENCH_ROUNDS, at least 4). */
  readonly rounds: number;
  /** Connections of the throughput runs (BENCH_CONNECTIONS). */
  readonly connections: number;
  /** Platforms to run the HTTP scenarios on (BENCH_PLATFORMS=express,fastify). */
  readonly platforms: readonly Platform[];
  /** Distinct keys of the `memory` scenario (BENCH_MEMORY_KEYS). */
  readonly memoryKeys: number;
  /** Measured rounds of the `coalesce` scenario (BENCH_COALESCE_ROUNDS). */
  readonly coalesceRounds: number;
  /**
   * Unmeasured `coalesce` rounds before the measured ones (BENCH_COALESCE_WARMUP), so that the
   * measured bursts run on optimised code, as in a process that has served traffic for a while.
   */
  readonly coalesceWarmupRounds: number;
  /** Handler time of the `coalesce` scenario, ms (BENCH_COALESCE_HANDLER_MS). */
  readonly coalesceHandlerMs: number;
  /** Requests per contender of the Redis round-trip count under MONITOR (BENCH_COUNT_REQUESTS). */
  readonly countRequests: number;
  /** Write a `--cpu-prof` profile of every server process to results/profiles (BENCH_CPU_PROF=1). */
  readonly cpuProfile: boolean;
  /**
   * Write a sampling heap profile of every server process's allocations, collected ones included,
   * to results/profiles (BENCH_ALLOC_PROF=1).
   */
  readonly allocationProfile: boolean;
}

function numberFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new Error(`${name} must be a number of at least ${min}, got ${JSON.stringify(raw)}.`);
  }
  return value;
}

export function benchSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const platforms = (env.BENCH_PLATFORMS ?? 'express,fastify')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const platform of platforms) {
    if (platform !== 'express' && platform !== 'fastify') {
      throw new Error(
        `BENCH_PLATFORMS lists express and/or fastify, got ${JSON.stringify(platform)}.`,
      );
    }
  }
  return {
    durationSeconds: numberFrom(env, 'BENCH_DURATION', 2, 1),
    latencyDurationSeconds: numberFrom(env, 'BENCH_DURATION_1C', 1, 1),
    warmupSeconds: numberFrom(env, 'BENCH_WARMUP', 1, 0),
    rounds: Math.round(numberFrom(env, 'BENCH_ROUNDS', 5, 4)),
    connections: Math.round(numberFrom(env, 'BENCH_CONNECTIONS', 50, 1)),
    platforms: platforms as Platform[],
    memoryKeys: Math.round(numberFrom(env, 'BENCH_MEMORY_KEYS', 1_000_000, 1)),
    coalesceRounds: Math.round(numberFrom(env, 'BENCH_COALESCE_ROUNDS', 5, 1)),
    coalesceWarmupRounds: Math.round(numberFrom(env, 'BENCH_COALESCE_WARMUP', 30, 0)),
    coalesceHandlerMs: Math.round(numberFrom(env, 'BENCH_COALESCE_HANDLER_MS', 200, 1)),
    countRequests: Math.round(numberFrom(env, 'BENCH_COUNT_REQUESTS', 200, 1)),
    cpuProfile: env.BENCH_CPU_PROF === '1',
    allocationProfile: env.BENCH_ALLOC_PROF === '1',
  };
}
