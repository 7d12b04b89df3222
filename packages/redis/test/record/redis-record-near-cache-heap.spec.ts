import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BeginOutcome, RecordLease, StoredResponse } from '@oncely/core';
import { RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService } from '@oncely/testing-kit';
import type { Redis } from 'ioredis';
import { connect, deleteKeys, eventually, uniquePrefix } from '../support/redis-test-keys.js';

/**
 * The near cache's byte bound measured on the heap, not only as the cache counts it: a stream of
 * distinct keys answered with ~100 KB responses, as a reporting route would answer them.
 */
const MiB = 1024 * 1024;
const KEYS = 400;
const options = { leaseTtlMs: 30_000, retentionMs: 60_000 };

// The test's own garbage collector, so what is measured is what the caches still hold.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function held(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

/** A response of ~100 KB of JSON, another one per key (nothing for V8 to share between them). */
function report(index: number): StoredResponse {
  const rows = Array.from({ length: 1_000 }, (_, row) => `${index}-${row}-`.padEnd(96, 'x'));
  return { status: 200, headers: {}, body: { kind: 'json', value: { index, rows } } };
}

describe('RedisIdempotencyRecordStore near cache on the heap', () => {
  const prefix = uniquePrefix('near-heap');
  const clients: Redis[] = [];

  /** Completes KEYS distinct records through a store with `maxBytes`; the heap they leave. */
  async function heapAfterDistinctKeys(maxBytes: number) {
    const client = connect();
    clients.push(client);
    const store = new RedisIdempotencyRecordStore(client, {
      keyPrefix: `${prefix}${maxBytes}:`,
      nearCache: { maxBytes },
    });
    await eventually(() => store.nearCacheStats()?.listening === true, 'the subscription');
    const before = held();
    for (let index = 0; index < KEYS; index++) {
      const lease = acquired(await store.begin(`shop:report:v1:t1:${index}`, 'd', options));
      await store.complete(lease, report(index));
    }
    const grown = held() - before;
    return { grown, stats: store.nearCacheStats()! };
  }

  beforeAll(async () => {
    await requireService('redis');
  });

  afterAll(async () => {
    await deleteKeys(clients[0] ?? connect(), prefix);
    await Promise.all(clients.map((client) => client.quit()));
  });

  it('holds no more than nearCache.maxBytes of ~100 KB responses, whatever the number of keys', async () => {
    const { grown, stats } = await heapAfterDistinctKeys(8 * MiB);
    expect(stats.bytes).toBeLessThanOrEqual(8 * MiB);
    expect(stats.entries).toBeGreaterThan(0);
    expect(stats.entries).toBeLessThan(KEYS);
    // The bound, plus what the client, its buffers and the allocator keep about (~0.4 MiB seen).
    expect(grown).toBeLessThan(8 * MiB + 4 * MiB);
  });

  it('is what keeps the heap down: the same stream under a bound it never reaches holds it all', async () => {
    const { grown, stats } = await heapAfterDistinctKeys(1024 * MiB);
    expect(stats.entries).toBe(KEYS);
    // 400 responses of ~100 KB each: ~40 MB counted, and held.
    expect(stats.bytes).toBeGreaterThan(KEYS * 90_000);
    expect(grown).toBeGreaterThan(32 * MiB);
  });
});
