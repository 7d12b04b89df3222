import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { services } from '@oncely/testing-kit';

/** A key prefix no other test run (nor another engineer's suite) shares. */
export function uniquePrefix(label: string): string {
  return `oncely-test:${label}:${randomUUID().slice(0, 8)}:`;
}

/** A client of the shared test Redis, with ioredis' defaults. */
export function connect(): Redis {
  return new Redis({ host: services.redis.host, port: services.redis.port });
}

/** Every key matching `pattern`, by SCAN (KEYS would block the shared server). */
export async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** Deletes every key under `prefix` on a standalone server (never a FLUSHDB: it is shared). */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  const keys = await scanKeys(client, `${prefix}*`);
  if (keys.length > 0) await client.del(...keys);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds (a wait for a state, not a timing assertion). */
export async function eventually(check: () => Promise<boolean> | boolean, what: string) {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Still waiting for ${what} after 20 s.`);
    await sleep(20);
  }
}
