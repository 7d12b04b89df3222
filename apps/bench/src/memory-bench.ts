import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import type { BenchSettings } from './bench-settings.js';

export interface MemorySummary {
  readonly keys: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly keysPerSecond: number;
  readonly heapBefore: number;
  readonly heapAfter: number;
  readonly heapPeak: number;
  /** heapAfter − heapBefore, per key of the run (bytes): 0 when no per-key state is left. */
  readonly retainedBytesPerKey: number;
  /** Keys the run left in Redis right after it (all expiring: fences, grace-period results). */
  readonly redisKeysLeft: number;
  /** Of those, keys without a TTL: per-key state Redis would keep for ever. Must be 0. */
  readonly redisKeysWithoutTtl: number;
}

/** Keys and keys with a TTL in db 0, from `INFO keyspace` (no scan of a million keys). */
async function keyspace(redis: Redis): Promise<{ keys: number; persistent: number }> {
  const match = /db0:keys=(\d+),expires=(\d+)/.exec(await redis.info('keyspace'));
  const keys = Number(match?.[1] ?? 0);
  return { keys, persistent: keys - Number(match?.[2] ?? 0) };
}

const worker = fileURLToPath(new URL('./memory-worker.js', import.meta.url));

/** 1 000 000 distinct keys through `@SingleFlight` with `resultTtl: 0`, in its own process. */
export async function runMemoryBench(
  settings: BenchSettings,
  redis: Redis,
  env: Record<string, string>,
): Promise<MemorySummary> {
  const keysBefore = await keyspace(redis);
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', worker], {
      env: { ...process.env, ...env, BENCH_MEMORY_KEYS: String(settings.memoryKeys) },
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: path.dirname(worker),
    });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    child.once('exit', (code) =>
      code === 0 ? resolve(text) : reject(new Error(`The memory worker exited ${code}.`)),
    );
  });
  const result = JSON.parse(output.trim().split('\n').pop()!) as Omit<
    MemorySummary,
    'retainedBytesPerKey' | 'redisKeysLeft' | 'redisKeysWithoutTtl' | 'keysPerSecond'
  >;
  const keysAfter = await keyspace(redis);
  return {
    ...result,
    keysPerSecond: result.keys / result.seconds,
    retainedBytesPerKey: (result.heapAfter - result.heapBefore) / result.keys,
    redisKeysLeft: keysAfter.keys - keysBefore.keys,
    redisKeysWithoutTtl: keysAfter.persistent - keysBefore.persistent,
  };
}
