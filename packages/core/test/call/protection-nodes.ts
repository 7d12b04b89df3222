import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  type FlightCoordinator,
  type IdempotencyRecordStore,
} from '@oncely/core';
import {
  type ProtectedCallEngines,
  ProtectedCallExecutor,
  createProtectionEngines,
} from '@oncely/core/adapter';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/** The in-memory store posing as a SQL one, so the executor puts the guard flight in front. */
export class GuardedRecordStore extends InMemoryIdempotencyRecordStore {
  override readonly answersAtCacheSpeed = false;
}

/**
 * One coordinator and one record store, and the executors ("nodes") that share them: each node
 * has its own engines, as another server would.
 */
export interface ProtectionNode {
  readonly executor: ProtectedCallExecutor;
  readonly engines: ProtectedCallEngines;
}

export interface ProtectionBackend {
  node(): ProtectionNode;
  /** Leases, stored outcomes, waiter flags and records oncely still holds. */
  leftovers(): Promise<number>;
  close(): Promise<void>;
}

export type BackendFactory = () => Promise<ProtectionBackend>;

export const inMemoryBackend: BackendFactory = async () => {
  const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
  const store = new GuardedRecordStore();
  return {
    node: () => nodeOn(coordinator, store),
    leftovers: async () => {
      coordinator.sweep();
      return coordinator.size + coordinator.waitingKeys + store.size;
    },
    close: () => coordinator.close(),
  };
};

export const redisBackend: BackendFactory = async () => {
  await requireService('redis');
  const prefix = `oncely-test:executor:${randomUUID().slice(0, 8)}:`;
  const redis = new Redis(services.redis);
  const coordinators: RedisFlightCoordinator[] = [];
  const store = new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix });
  return {
    node: () => {
      const coordinator = new RedisFlightCoordinator(services.redis, {
        keyPrefix: prefix,
        commandTimeout: 10_000,
      });
      coordinators.push(coordinator);
      return nodeOn(coordinator, store);
    },
    // A flight's fence counter outlives its lease by design (tokens must keep growing) and
    // expires on its own within a lease TTL: it counts only if it would stay.
    leftovers: async () => {
      const keys = await scan(redis, `${prefix}*`);
      const fences = keys.filter((key) => key.endsWith(':fence'));
      const lasting = await Promise.all(fences.map(async (key) => (await redis.pttl(key)) === -1));
      return keys.length - fences.length + lasting.filter(Boolean).length;
    },
    close: async () => {
      const keys = await scan(redis, `${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await Promise.all(coordinators.map((coordinator) => coordinator.close()));
      redis.disconnect();
    },
  };
};

export const backends: ReadonlyArray<[string, BackendFactory]> = [
  ['in memory', inMemoryBackend],
  ['on Redis', redisBackend],
];

function nodeOn(coordinator: FlightCoordinator, store: IdempotencyRecordStore): ProtectionNode {
  const engines = createProtectionEngines({ coordinator, store });
  return { executor: new ProtectedCallExecutor(engines), engines };
}

async function scan(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** A gate a handler waits on, and a signal that it got there. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let signal!: () => void;
  const entered = new Promise<void>((resolve) => (signal = resolve));
  return { opened, open, entered, signal };
}

/**
 * The call's outcome, failing the test instead of hanging it when there is none: a guard
 * against the "never answers" bug, not a timing assertion.
 */
export async function answered<T>(pending: Promise<T>, what: string, limitMs = 10_000) {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never answered`)), limitMs);
  });
  try {
    return await Promise.race([pending, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` until it holds: a wait for a state, not a timing assertion. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string) {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Still waiting for ${what} after 20 s.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
