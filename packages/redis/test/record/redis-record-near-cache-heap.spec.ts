import { requireService, spawnWorker } from '@oncely/testing-kit';
import type { HeapReport } from './fixtures/near-cache-heap.worker.js';
import { connect, deleteKeys, uniquePrefix } from '../support/redis-test-keys.js';

/**
 * The near cache's byte bound measured on the heap, not only as the cache counts it: a stream of
 * distinct keys answered with ~100 KB responses, as a reporting route would answer them, each
 * measurement in a process of its own.
 */
const MiB = 1024 * 1024;
const KEYS = 400;
const WORKER = 'packages/redis/test/record/fixtures/near-cache-heap.worker.ts';

describe('RedisIdempotencyRecordStore near cache on the heap', () => {
  const prefix = uniquePrefix('near-heap');

  /** Completes KEYS distinct records through a store with `maxBytes`; the heap they leave. */
  async function heapAfterDistinctKeys(maxBytes: number): Promise<HeapReport> {
    const worker = spawnWorker(WORKER, {
      args: [`${prefix}${maxBytes}:`, String(maxBytes), String(KEYS)],
    });
    const report = await worker.message<HeapReport>(() => true, 60_000);
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    return report;
  }

  beforeAll(async () => {
    await requireService('redis');
  });

  afterAll(async () => {
    const client = connect();
    await deleteKeys(client, prefix);
    await client.quit();
  });

  it('holds no more than nearCache.maxBytes of ~100 KB responses, whatever the number of keys', async () => {
    const { grown, entries, bytes } = await heapAfterDistinctKeys(8 * MiB);
    expect(bytes).toBeLessThanOrEqual(8 * MiB);
    expect(entries).toBeGreaterThan(0);
    expect(entries).toBeLessThan(KEYS);
    // The bound, plus what the client, its buffers and the allocator keep about (~0.4 MiB seen).
    expect(grown).toBeLessThan(8 * MiB + 4 * MiB);
  });

  it('is what keeps the heap down: the same stream under a bound it never reaches holds it all', async () => {
    const { grown, entries, bytes } = await heapAfterDistinctKeys(1024 * MiB);
    expect(entries).toBe(KEYS);
    // 400 responses of ~100 KB each: ~40 MB counted, and held.
    expect(bytes).toBeGreaterThan(KEYS * 90_000);
    expect(grown).toBeGreaterThan(32 * MiB);
  });
});
