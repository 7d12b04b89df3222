import { randomBytes } from 'node:crypto';
import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  OncelyConfigurationError,
  SealedDataError,
  toProblemResponse,
  type IdempotencyRecordStore,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import { EncryptedFlightCoordinator, EncryptedIdempotencyRecordStore } from '@oncely/core/adapter';
import { EncryptionKeyring } from '../../src/security/encryption-keyring.js';

const key = (id: string) => ({ id, secret: randomBytes(32) });
const options = { leaseTtlMs: 10_000, retentionMs: 60_000 };
const response: StoredResponse = {
  status: 201,
  headers: { location: '/orders/secret-order-7' },
  body: { kind: 'json', value: { card: '4111-1111-1111-1111', amount: '100.00' } },
};

async function completeOne(store: IdempotencyRecordStore, identity: string): Promise<RecordLease> {
  const begun = await store.begin(identity, 'd'.repeat(64), options);
  if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
  await store.complete(begun.lease, response);
  return begun.lease;
}

describe('EncryptionKeyring', () => {
  it('opens what it sealed, only in the same context', () => {
    const ring = new EncryptionKeyring('test', { keys: [key('k1')] });
    const sealed = ring.seal(Buffer.from('secret'), 'ctx-a');
    expect(sealed.includes(Buffer.from('secret'))).toBe(false);
    expect(ring.open(sealed, 'ctx-a').toString()).toBe('secret');
    expect(() => ring.open(sealed, 'ctx-b')).toThrow(SealedDataError);
  });

  it('seals with the first key and opens with any (rotation)', () => {
    const k1 = key('k1');
    const k2 = key('k2');
    const old = new EncryptionKeyring('test', { keys: [k1] }).seal(Buffer.from('x'), 'c');
    const rotated = new EncryptionKeyring('test', { keys: [k2, k1] });
    expect(rotated.open(old, 'c').toString()).toBe('x');
    const fresh = rotated.seal(Buffer.from('y'), 'c');
    expect(new EncryptionKeyring('test', { keys: [k2] }).open(fresh, 'c').toString()).toBe('y');
    const onlyNew = new EncryptionKeyring('test', { keys: [k2] });
    expect(() => onlyNew.open(old, 'c')).toThrow(
      expect.objectContaining({ failure: 'unknown_key', keyId: 'k1' }),
    );
  });

  it('fails on every flipped byte as tampered, malformed or unknown key, never with data', () => {
    const ring = new EncryptionKeyring('test', { keys: [key('k1')] });
    const sealed = ring.seal(Buffer.from('payload'), 'c');
    for (let i = 3; i < sealed.length; i++) {
      const bad = Buffer.from(sealed);
      bad[i] = (bad[i] as number) ^ 0x01;
      expect(() => ring.open(bad, 'c')).toThrow(SealedDataError);
    }
  });

  it('refuses bad keys at start-up, naming the option', () => {
    expect(() => new EncryptionKeyring('X', { keys: [] })).toThrow(OncelyConfigurationError);
    expect(
      () => new EncryptionKeyring('X', { keys: [{ id: 'a', secret: randomBytes(16) }] }),
    ).toThrow(/keys\[0\]\.secret/);
    expect(() => new EncryptionKeyring('X', { keys: [key('a'), key('a')] })).toThrow(
      /keys\[1\]\.id/,
    );
    expect(
      new EncryptionKeyring('X', {
        keys: [{ id: 'b64', secret: randomBytes(32).toString('base64') }],
      }),
    ).toBeInstanceOf(EncryptionKeyring);
  });
});

describe('EncryptedIdempotencyRecordStore', () => {
  it('hands the store ciphertext only, and replays the original response', async () => {
    const inner = new InMemoryIdempotencyRecordStore();
    const store = new EncryptedIdempotencyRecordStore(inner, { keys: [key('k1')] });
    await completeOne(store, 'ns:op:v1:t-1:a');
    const raw = await inner.inspect('ns:op:v1:t-1:a');
    if (raw.kind !== 'completed') throw new Error(raw.kind);
    expect(raw.response.headers).toEqual({});
    expect(raw.response.body.kind).toBe('bytes');
    const bytes = Buffer.from((raw.response.body as { value: Uint8Array }).value);
    expect(bytes.includes(Buffer.from('4111'))).toBe(false);
    expect(bytes.includes(Buffer.from('secret-order'))).toBe(false);
    const replay = await store.begin('ns:op:v1:t-1:a', 'd'.repeat(64), options);
    expect(replay).toEqual({ kind: 'replay', response });
    const inspected = await store.inspect!('ns:op:v1:t-1:a');
    expect(inspected.kind === 'completed' && inspected.response).toEqual(response);
  });

  it('peeks opened replays, and none that does not open, leaving it to begin to refuse', async () => {
    const inner = new InMemoryIdempotencyRecordStore();
    const store = new EncryptedIdempotencyRecordStore(inner, { keys: [key('k1')] });
    expect(store.peekReplay!('ns:op:v1:t-1:a', 'd'.repeat(64), options)).toBeUndefined();
    await completeOne(store, 'ns:op:v1:t-1:a');
    expect(store.peekReplay!('ns:op:v1:t-1:a', 'd'.repeat(64), options)).toEqual(response);

    const raw = inner.peekReplay('ns:op:v1:t-1:a', 'd'.repeat(64), options)!;
    expect(raw.body.kind).toBe('bytes');
    const begun = await inner.begin('ns:op:v1:t-2:a', 'd'.repeat(64), options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await inner.complete(begun.lease, raw);
    expect(store.peekReplay!('ns:op:v1:t-2:a', 'd'.repeat(64), options)).toBeUndefined();
    await expect(store.begin('ns:op:v1:t-2:a', 'd'.repeat(64), options)).rejects.toThrow(
      SealedDataError,
    );
  });

  it('opens a shared peek once, and only for the identity it was opened under', async () => {
    const inner = new InMemoryIdempotencyRecordStore();
    const keys = [key('k1')];
    const store = new EncryptedIdempotencyRecordStore(inner, { keys });
    await completeOne(store, 'ns:op:v1:t-1:a');

    const first = store.peekReplay!('ns:op:v1:t-1:a', 'd'.repeat(64), options);
    expect(first).toEqual(response);
    expect(store.peekReplay!('ns:op:v1:t-1:a', 'd'.repeat(64), options)).toBe(first);

    // A store that answered another identity with the same object must not get the opening.
    const shared = inner.peekReplay('ns:op:v1:t-1:a', 'd'.repeat(64), options)!;
    const sharing = new EncryptedIdempotencyRecordStore(
      Object.assign(Object.create(inner) as InMemoryIdempotencyRecordStore, {
        peekReplay: () => shared,
      }),
      { keys },
    );
    expect(sharing.peekReplay!('ns:op:v1:t-1:a', 'd'.repeat(64), options)).toEqual(response);
    expect(sharing.peekReplay!('ns:op:v1:t-2:a', 'd'.repeat(64), options)).toBeUndefined();
  });

  it('refuses a sealed response moved to another identity', async () => {
    const inner = new InMemoryIdempotencyRecordStore();
    const store = new EncryptedIdempotencyRecordStore(inner, { keys: [key('k1')] });
    await completeOne(store, 'ns:op:v1:t-1:a');
    const raw = await inner.inspect('ns:op:v1:t-1:a');
    if (raw.kind !== 'completed') throw new Error(raw.kind);
    const begun = await inner.begin('ns:op:v1:t-2:a', 'd'.repeat(64), options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await inner.complete(begun.lease, raw.response);
    await expect(store.begin('ns:op:v1:t-2:a', 'd'.repeat(64), options)).rejects.toThrow(
      expect.objectContaining({ code: 'sealed_data_unreadable', failure: 'tampered' }),
    );
  });

  it("opens a previous version's record replayed for the current one under its own identity", async () => {
    const store = new EncryptedIdempotencyRecordStore(new InMemoryIdempotencyRecordStore(), {
      keys: [key('k1')],
    });
    await completeOne(store, 'shop:pay:v1:t-1:k');

    const outcome = await store.begin('shop:pay:v2:t-1:k', 'd'.repeat(64), {
      ...options,
      previousIdentities: ['shop:pay:v1:t-1:k'],
    });

    expect(outcome).toEqual({
      kind: 'replay',
      response,
      previousIdentity: 'shop:pay:v1:t-1:k',
    });
  });

  it('refuses a record written around the encryption unless told to accept it', async () => {
    const inner = new InMemoryIdempotencyRecordStore();
    await completeOne(inner, 'ns:op:v1:t-1:a');
    const strict = new EncryptedIdempotencyRecordStore(inner, { keys: [key('k1')] });
    await expect(strict.begin('ns:op:v1:t-1:a', 'd'.repeat(64), options)).rejects.toThrow(
      expect.objectContaining({ failure: 'not_sealed' }),
    );
    const migrating = new EncryptedIdempotencyRecordStore(inner, {
      keys: [key('k1')],
      acceptUnsealed: true,
    });
    expect(await migrating.begin('ns:op:v1:t-1:a', 'd'.repeat(64), options)).toEqual({
      kind: 'replay',
      response,
    });
  });

  it('maps SealedDataError to a 500 problem that names no key and no data', () => {
    const problem = toProblemResponse(new SealedDataError('unknown_key', 'prod-key-2026'));
    expect(problem?.status).toBe(500);
    expect(problem?.body.type).toBe('urn:oncely:problem:stored-data-unreadable');
    expect(JSON.stringify(problem)).not.toContain('prod-key-2026');
    expect(JSON.stringify(problem)).not.toContain('unknown_key');
  });

  it('keeps the wrapped store non-transactional when it is', () => {
    const store = new EncryptedIdempotencyRecordStore(new InMemoryIdempotencyRecordStore(), {
      keys: [key('k1')],
    });
    expect(store.runInTransaction).toBeUndefined();
  });
});

describe('EncryptedFlightCoordinator', () => {
  it('stores sealed payloads, returns them opened, and refuses them under another key', async () => {
    const inner = new InMemoryFlightCoordinator();
    const coordinator = new EncryptedFlightCoordinator(inner, { keys: [key('k1')] });
    try {
      expect((await coordinator.acquire('k:a', 'o1', 5_000)).kind).toBe('leader');
      await coordinator.complete('k:a', 'o1', {
        kind: 'result',
        payload: '{"secret":42}',
        ttlMs: 60_000,
      });
      const raw = await inner.acquire('k:a', 'o2', 5_000);
      expect(raw.kind).toBe('cached');
      expect(raw.kind === 'cached' && raw.payload.startsWith('oe1:')).toBe(true);
      expect(raw.kind === 'cached' && raw.payload.includes('secret')).toBe(false);
      expect(await coordinator.acquire('k:a', 'o3', 5_000)).toEqual({
        kind: 'cached',
        payload: '{"secret":42}',
      });
      // The same ciphertext planted under another key does not open there.
      expect((await inner.acquire('k:b', 'o4', 5_000)).kind).toBe('leader');
      await inner.complete('k:b', 'o4', {
        kind: 'result',
        payload: raw.kind === 'cached' ? raw.payload : '',
        ttlMs: 60_000,
      });
      await expect(coordinator.acquire('k:b', 'o5', 5_000)).rejects.toThrow(SealedDataError);
    } finally {
      await coordinator.close();
    }
  });

  it('peeks opened payloads, and holds none that does not open, leaving it to acquire', async () => {
    const inner = new InMemoryFlightCoordinator();
    const coordinator = new EncryptedFlightCoordinator(inner, { keys: [key('k1')] });
    try {
      expect(coordinator.peek('k:a')).toBeUndefined();
      for (const [key, kind] of [
        ['k:a', 'result'],
        ['k:e', 'error'],
      ] as const) {
        expect((await coordinator.acquire(key, 'o1', 5_000)).kind).toBe('leader');
        await coordinator.complete(key, 'o1', { kind, payload: '{"secret":42}', ttlMs: 60_000 });
        expect(inner.peek(key)?.payload.includes('secret')).toBe(false);
        expect(coordinator.peek(key)).toEqual({
          kind: kind === 'result' ? 'cached' : 'failed',
          payload: '{"secret":42}',
        });
      }
      expect((await inner.acquire('k:b', 'o2', 5_000)).kind).toBe('leader');
      await inner.complete('k:b', 'o2', {
        kind: 'result',
        payload: inner.peek('k:a')!.payload,
        ttlMs: 60_000,
      });
      expect(coordinator.peek('k:b')).toBeUndefined();
      await expect(coordinator.acquire('k:b', 'o3', 5_000)).rejects.toThrow(SealedDataError);
    } finally {
      await coordinator.close();
    }
  });
});
