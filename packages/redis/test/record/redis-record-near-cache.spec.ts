import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import type { BeginOutcome, RecordLease, StoredResponse } from '@oncely/core';
import { RedisIdempotencyRecordAdmin, RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { deleteKeys, eventually, sleep, uniquePrefix } from '../support/redis-test-keys.js';

const options = { leaseTtlMs: 30_000, retentionMs: 60_000 };
const response: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value: { id: 7 } },
};

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

describe('RedisIdempotencyRecordStore near cache', () => {
  const prefix = uniquePrefix('near');
  const clients: Redis[] = [];
  let seq = 0;
  const nextIdentity = () => `shop:order-create:v1:tenant-1:order-${++seq}`;

  /** A store on its own named connection, once its notice subscription is confirmed. */
  async function listeningStore(
    extra: ConstructorParameters<typeof RedisIdempotencyRecordStore>[1] = {},
  ) {
    const name = `oncely-near-${randomBytes(4).toString('hex')}`;
    const client = new Redis({
      host: services.redis.host,
      port: services.redis.port,
      connectionName: name,
    });
    clients.push(client);
    const store = new RedisIdempotencyRecordStore(client, { keyPrefix: prefix, ...extra });
    await eventually(() => store.nearCacheStats()?.listening === true, 'the subscription');
    const sent = jest.spyOn(client, 'sendCommand');
    return { client, store, sent, name };
  }

  beforeAll(async () => {
    await requireService('redis');
  });

  afterAll(async () => {
    const admin = new Redis({ host: services.redis.host, port: services.redis.port });
    await deleteKeys(admin, prefix);
    await admin.quit();
    await Promise.all(clients.map((client) => client.quit()));
  });

  it('answers replays with no Redis command, in the process that completed and in one that replayed', async () => {
    const { store, sent } = await listeningStore();
    const other = await listeningStore();
    const identity = nextIdentity();
    await store.complete(acquired(await store.begin(identity, 'd1', options)), response);
    sent.mockClear();

    for (let i = 0; i < 3; i++) {
      expect(await store.begin(identity, 'd1', options)).toEqual({ kind: 'replay', response });
    }
    expect(store.peekReplay(identity, 'd1', options)).toEqual(response);
    expect(store.peekReplay(identity, 'd2', options)).toBeUndefined();
    expect(sent).not.toHaveBeenCalled();

    expect(other.store.peekReplay(identity, 'd1', options)).toBeUndefined();
    expect(await other.store.begin(identity, 'd1', options)).toEqual({ kind: 'replay', response });
    expect(other.sent).toHaveBeenCalledTimes(1);
    expect(await other.store.begin(identity, 'd1', options)).toEqual({ kind: 'replay', response });
    expect(other.store.peekReplay(identity, 'd1', options)).toEqual(response);
    expect(other.sent).toHaveBeenCalledTimes(1);
  });

  it('decodes a near-cached record once for every peek; begin still hands out copies', async () => {
    const { store } = await listeningStore();
    const identity = nextIdentity();
    await store.complete(acquired(await store.begin(identity, 'd1', options)), response);

    const first = store.peekReplay(identity, 'd1', options);
    expect(first).toEqual(response);
    expect(store.peekReplay(identity, 'd1', options)).toBe(first);
    const begun = await store.begin(identity, 'd1', options);
    expect(begun).toEqual({ kind: 'replay', response });
    expect(begun.kind === 'replay' && begun.response).not.toBe(first);
  });

  it('never answers after the record expired in Redis', async () => {
    const { store, sent } = await listeningStore();
    const identity = nextIdentity();
    const short = { leaseTtlMs: 30_000, retentionMs: 300 };
    await store.complete(acquired(await store.begin(identity, 'd1', short)), response);
    sent.mockClear();
    expect(await store.begin(identity, 'd1', short)).toEqual({ kind: 'replay', response });
    expect(sent).not.toHaveBeenCalled();

    await sleep(350);
    expect(store.peekReplay(identity, 'd1', short)).toBeUndefined();
    expect((await store.begin(identity, 'd1', short)).kind).toBe('acquired');
    expect(sent).toHaveBeenCalled();
  });

  it("drops a record an operator deleted from another connection, on the admin's notice", async () => {
    const { store } = await listeningStore();
    const operator = new Redis({ host: services.redis.host, port: services.redis.port });
    clients.push(operator);
    const admin = new RedisIdempotencyRecordAdmin(operator, { keyPrefix: prefix });
    const [deleted, kept] = [nextIdentity(), nextIdentity()];
    for (const identity of [deleted, kept]) {
      await store.complete(acquired(await store.begin(identity, 'd1', options)), response);
    }
    expect(store.nearCacheStats()?.entries).toBe(2);

    expect(await admin.deleteRecord(deleted)).toBe(true);
    await eventually(() => store.nearCacheStats()?.entries === 1, 'the deletion notice');
    expect(store.peekReplay(deleted, 'd1', options)).toBeUndefined();
    expect(store.peekReplay(kept, 'd1', options)).toEqual(response);

    expect((await store.begin(deleted, 'd1', options)).kind).toBe('acquired');
    expect(await store.begin(kept, 'd1', options)).toEqual({ kind: 'replay', response });
    expect(await admin.deleteRecord(nextIdentity())).toBe(false);
    await admin.flushNearCaches();
    await eventually(() => store.nearCacheStats()?.entries === 0, 'the flush notice');
  });

  it('serves nothing while its subscription is down, and starts empty when it is back', async () => {
    const { store, client, sent, name } = await listeningStore();
    const identity = nextIdentity();
    await store.complete(acquired(await store.begin(identity, 'd1', options)), response);
    expect(store.nearCacheStats()?.entries).toBe(1);

    // Kills this store's subscriber connection only: the one of its name in pub/sub mode.
    const list = (await client.client('LIST')) as string;
    const subscriber = list
      .split('\n')
      .find((line) => line.includes(` name=${name} `) && / sub=[1-9]/.test(line));
    const id = / ?id=(\d+)/.exec(subscriber ?? '')?.[1];
    expect(id).toBeDefined();
    const before = store.nearCacheStats();
    await client.client('KILL', 'ID', id!);
    await eventually(() => store.nearCacheStats()?.listening === false, 'the disconnect');
    expect(before).toMatchObject({ entries: 1, listening: true });
    expect(store.nearCacheStats()?.entries).toBe(0);
    await eventually(() => store.nearCacheStats()?.listening === true, 'the resubscription');
    expect(store.nearCacheStats()?.entries).toBe(0);

    sent.mockClear();
    expect(await store.begin(identity, 'd1', options)).toEqual({ kind: 'replay', response });
    expect(sent).toHaveBeenCalledTimes(1);
  });

  it('keeps at most maxEntries, the least recently used going first', async () => {
    const { store, sent } = await listeningStore({ nearCache: { maxEntries: 3 } });
    const identities = Array.from({ length: 5 }, nextIdentity);
    for (const identity of identities) {
      await store.complete(acquired(await store.begin(identity, 'd1', options)), response);
    }
    expect(store.nearCacheStats()?.entries).toBe(3);
    sent.mockClear();
    for (const identity of identities.slice(2)) await store.begin(identity, 'd1', options);
    expect(sent).not.toHaveBeenCalled();
    expect(await store.begin(identities[0]!, 'd1', options)).toEqual({ kind: 'replay', response });
    expect(sent).toHaveBeenCalledTimes(1);
  });

  it('keeps 1 MiB responses up to nearCache.maxBytes, the least recently used going first', async () => {
    const MiB = 1024 * 1024;
    const { store, sent } = await listeningStore({ nearCache: { maxBytes: 8 * MiB } });
    const large: StoredResponse = {
      status: 200,
      headers: {},
      body: { kind: 'bytes', value: new Uint8Array(MiB).fill(9) },
    };
    const identities = Array.from({ length: 10 }, nextIdentity);
    for (const identity of identities) {
      await store.complete(acquired(await store.begin(identity, 'd1', options)), large);
    }
    // Each counts 256, two per character of identity, digest and headers, and its 1 MiB body.
    const each = 256 + 2 * (identities[0]!.length + 'd1'.length + '{}'.length) + MiB;
    expect(identities.every((identity) => identity.length === identities[0]!.length)).toBe(true);
    expect(store.nearCacheStats()).toEqual({ entries: 7, bytes: 7 * each, listening: true });
    sent.mockClear();
    for (const identity of identities.slice(3)) {
      expect(await store.begin(identity, 'd1', options)).toEqual({
        kind: 'replay',
        response: large,
      });
    }
    expect(sent).not.toHaveBeenCalled();
    expect(await store.begin(identities[0]!, 'd1', options)).toEqual({
      kind: 'replay',
      response: large,
    });
    expect(sent).toHaveBeenCalledTimes(1);
    expect(store.nearCacheStats()?.entries).toBe(7);

    const { store: small } = await listeningStore({ nearCache: { maxBytes: MiB } });
    await small.complete(acquired(await small.begin(nextIdentity(), 'd1', options)), large);
    expect(small.nearCacheStats()).toEqual({ entries: 0, bytes: 0, listening: true });
  });

  it('sends a mismatch and a foreign owner to Redis, which answers them as before', async () => {
    const { store, sent } = await listeningStore();
    const identity = nextIdentity();
    const owned = { ...options, owner: 'billing' };
    await store.complete(acquired(await store.begin(identity, 'd1', owned)), response);
    sent.mockClear();

    expect(await store.begin(identity, 'd2', owned)).toEqual({ kind: 'mismatch' });
    expect(await store.begin(identity, 'd1', { ...options, owner: 'shipping' })).toEqual({
      kind: 'foreign_owner',
      owner: 'billing',
    });
    expect(sent).toHaveBeenCalledTimes(2);
    expect(
      await store.begin(identity, 'd1', { ...options, owner: 'shipping', shared: true }),
    ).toEqual({ kind: 'replay', response });
    expect(await store.begin(identity, 'd1', options)).toEqual({ kind: 'replay', response });
    expect(sent).toHaveBeenCalledTimes(2);
  });

  it('opens no subscriber and always reads Redis with nearCache: false', async () => {
    const client = new Redis({ host: services.redis.host, port: services.redis.port });
    clients.push(client);
    const store = new RedisIdempotencyRecordStore(client, { keyPrefix: prefix, nearCache: false });
    const identity = nextIdentity();
    await store.complete(acquired(await store.begin(identity, 'd1', options)), response);
    const sent = jest.spyOn(client, 'sendCommand');
    await store.begin(identity, 'd1', options);
    expect(sent).toHaveBeenCalledTimes(1);
    expect(store.peekReplay(identity, 'd1', options)).toBeUndefined();
    expect(store.nearCacheStats()).toBeUndefined();
    expect(() => new RedisIdempotencyRecordStore(client, { nearCache: { maxEntries: 0 } })).toThrow(
      /nearCache\.maxEntries/,
    );
    expect(() => new RedisIdempotencyRecordStore(client, { nearCache: { maxBytes: 0.5 } })).toThrow(
      /nearCache\.maxBytes/,
    );
  });
});
