import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A key prefix no other test run (nor another engineer's suite) shares. */
export function uniquePrefix(label: string): string {
  return `oncely-test:${label}:${randomUUID().slice(0, 8)}:`;
}

/** Deletes every key under `prefix` on a standalone server (never a FLUSHDB: it is shared). */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
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
