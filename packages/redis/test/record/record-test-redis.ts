import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { services } from '@oncely/testing-kit';

/** A key prefix no other run (or other engineer's test) on the shared Redis can produce. */
export function uniquePrefix(label: string): string {
  return `oncely-test:${label}:${randomBytes(6).toString('hex')}:`;
}

export function connect(): Redis {
  return new Redis({ host: services.redis.host, port: services.redis.port });
}

/** Every key matching `pattern`, by SCAN (KEYS would block the shared server). */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** Deletes every key under `prefix` (never FLUSHDB: the server is shared). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await scanKeys(redis, `${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
