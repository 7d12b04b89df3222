import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type {
  BeginOutcome,
  IdempotencyRecordStore,
  RecordLease,
} from '../record/idempotency-record-store.port.js';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import type { StoredResponse } from '../record/stored-response.js';

/** What one contract case runs against; the factory builds a fresh one per case. */
export interface IdempotencyRecordStoreHarness {
  readonly store: IdempotencyRecordStore;
  /**
   * Lets `ms` milliseconds pass for the store: moves a fake clock forward, or really sleeps when
   * the backend keeps its own time (e.g. Redis key TTLs).
   */
  advance(ms: number): Promise<void>;
  /** Frees what the harness opened; called after every case, failed or not. */
  cleanup(): Promise<void>;
}

export type IdempotencyRecordStoreHarnessFactory = () => Promise<IdempotencyRecordStoreHarness>;

export interface IdempotencyRecordStoreContractOptions {
  /** Lease TTL of the cases, in ms. Default 500: short, because `advance` may really sleep. */
  readonly leaseTtlMs?: number;
  /** Retention of completed records in the cases, in ms. Default 1000. */
  readonly retentionMs?: number;
  /** How many `begin` calls the concurrency cases fire at once. Default 10. */
  readonly concurrency?: number;
  /**
   * The backend drops expired records by itself (e.g. Redis key TTLs), so `purgeExpired` never
   * finds any to count. Without it, `purgeExpired` must count exactly the expired records, which
   * needs a store that sees only this harness's records (own table, schema or key prefix).
   */
  readonly expiresNatively?: boolean;
}

/** One named, runner-agnostic case: resolves on success, throws an `AssertionError` otherwise. */
export interface IdempotencyRecordStoreContractCase {
  readonly name: string;
  readonly run: () => Promise<void>;
}

/**
 * The behaviour every `IdempotencyRecordStore` must show, as named async cases for any test
 * runner: `registerContractCases(idempotencyRecordStoreContract(factory), it)`.
 * Identities are random per case, so a shared backend is fine except for `purgeExpired` (see
 * `expiresNatively`). No case asserts on durations.
 */
export function idempotencyRecordStoreContract(
  factory: IdempotencyRecordStoreHarnessFactory,
  options: IdempotencyRecordStoreContractOptions = {},
): IdempotencyRecordStoreContractCase[] {
  const leaseTtlMs = options.leaseTtlMs ?? 500;
  const retentionMs = options.retentionMs ?? 1000;
  const concurrency = options.concurrency ?? 10;
  const timing = { leaseTtlMs, retentionMs };
  /** Past an expiry by a margin a real clock also honours. */
  const past = (ms: number) => ms + Math.max(50, Math.round(ms / 10));

  const withHarness =
    (body: (harness: IdempotencyRecordStoreHarness) => Promise<void>) => async () => {
      const harness = await factory();
      try {
        await body(harness);
      } finally {
        await harness.cleanup();
      }
    };

  const cases: Record<string, (harness: IdempotencyRecordStoreHarness) => Promise<void>> = {
    'begin acquires a fresh identity with a lease on it': async ({ store }) => {
      const identity = newIdentity('fresh');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));

      assert.equal(lease.identity, identity);
      assert.equal(lease.keyHash, createHash('sha256').update(identity, 'utf8').digest('hex'));
      assert.equal(typeof lease.ownerToken, 'string');
      assert.ok(lease.ownerToken.length > 0, 'the owner token is empty');
      assert.ok(
        Number.isSafeInteger(lease.fence) && lease.fence > 0,
        'fence is not a positive integer',
      );
      assert.ok(lease.leaseExpiresAt instanceof Date, 'leaseExpiresAt is not a Date');
    },

    'begin reports in_progress with a retry-after while the lease is live': async ({ store }) => {
      const identity = newIdentity('live');
      acquired(await store.begin(identity, digestOf('a'), timing));

      const outcome = await store.begin(identity, digestOf('a'), timing);

      assert.equal(outcome.kind, 'in_progress');
      const { retryAfterMs } = outcome;
      assert.ok(retryAfterMs > 0 && retryAfterMs <= leaseTtlMs, `retryAfterMs ${retryAfterMs}`);
    },

    'begin replays the stored response after complete': async ({ store }) => {
      const identity = newIdentity('replay');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));
      await store.complete(lease, jsonResponse);

      for (let attempt = 0; attempt < 2; attempt += 1) {
        assertSameResponse(
          replayed(await store.begin(identity, digestOf('a'), timing)),
          jsonResponse,
        );
      }
    },

    'begin reports mismatch for another digest and leaves the record untouched': async ({
      store,
    }) => {
      const identity = newIdentity('mismatch');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));

      assert.deepEqual(await store.begin(identity, digestOf('b'), timing), { kind: 'mismatch' });
      assert.equal((await store.begin(identity, digestOf('a'), timing)).kind, 'in_progress');
      await store.complete(lease, jsonResponse);

      assert.deepEqual(await store.begin(identity, digestOf('b'), timing), { kind: 'mismatch' });
      assertSameResponse(
        replayed(await store.begin(identity, digestOf('a'), timing)),
        jsonResponse,
      );
    },

    'exactly one of concurrent begins acquires, the others are in_progress': async ({ store }) => {
      const identity = newIdentity('race');
      const outcomes = await Promise.all(
        Array.from({ length: concurrency }, () => store.begin(identity, digestOf('a'), timing)),
      );

      assert.deepEqual(countKinds(outcomes), { acquired: 1, in_progress: concurrency - 1 });
    },

    'an expired lease is taken over exactly once, with a higher fence': async ({
      store,
      advance,
    }) => {
      const identity = newIdentity('takeover');
      const first = acquired(await store.begin(identity, digestOf('a'), timing));
      await advance(past(leaseTtlMs));

      const outcomes = await Promise.all(
        Array.from({ length: concurrency }, () => store.begin(identity, digestOf('a'), timing)),
      );

      assert.deepEqual(countKinds(outcomes), { acquired: 1, in_progress: concurrency - 1 });
      const second = outcomes.map(leaseOf).find((lease) => lease !== undefined);
      assert.ok(second !== undefined);
      assert.ok(second.fence > first.fence, `fence ${second.fence} is not above ${first.fence}`);
      assert.notEqual(second.ownerToken, first.ownerToken);
    },

    'the previous owner can neither complete, release nor renew after a takeover': async ({
      store,
      advance,
    }) => {
      const identity = newIdentity('stale-owner');
      const first = acquired(await store.begin(identity, digestOf('a'), timing));
      await advance(past(leaseTtlMs));
      const second = acquired(await store.begin(identity, digestOf('a'), timing));

      await assertLeaseLost(store.complete(first, textResponse), first);
      await store.release(first);
      assert.equal(await store.renew(first, leaseTtlMs * 10), false);
      assert.equal((await store.begin(identity, digestOf('a'), timing)).kind, 'in_progress');

      await store.complete(second, jsonResponse);
      assertSameResponse(
        replayed(await store.begin(identity, digestOf('a'), timing)),
        jsonResponse,
      );
    },

    'renew extends a held lease': async ({ store, advance }) => {
      const identity = newIdentity('renew');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));
      await advance(Math.round(leaseTtlMs / 2));

      assert.equal(await store.renew(lease, leaseTtlMs * 3), true);
      await advance(leaseTtlMs);
      assert.equal((await store.begin(identity, digestOf('a'), timing)).kind, 'in_progress');

      await advance(past(leaseTtlMs * 2));
      const next = acquired(await store.begin(identity, digestOf('a'), timing));
      assert.ok(next.fence > lease.fence, 'the renewed lease was not taken over after it expired');
    },

    'release lets the next begin acquire, and the released lease is lost': async ({ store }) => {
      const identity = newIdentity('release');
      const first = acquired(await store.begin(identity, digestOf('a'), timing));
      await store.release(first);

      const second = acquired(await store.begin(identity, digestOf('a'), timing));
      assert.notEqual(second.ownerToken, first.ownerToken);
      await assertLeaseLost(store.complete(first, textResponse), first);
      assert.equal(await store.renew(first, leaseTtlMs), false);
      await store.release(first);
      assert.equal((await store.begin(identity, digestOf('a'), timing)).kind, 'in_progress');
    },

    'complete is accepted once: a second complete fails and keeps the first response': async ({
      store,
    }) => {
      const identity = newIdentity('complete-twice');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));
      await store.complete(lease, jsonResponse);

      await assertLeaseLost(store.complete(lease, textResponse), lease);
      assertSameResponse(
        replayed(await store.begin(identity, digestOf('a'), timing)),
        jsonResponse,
      );
    },

    'an expired completed record is treated as absent': async ({ store, advance }) => {
      const identity = newIdentity('retention');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));
      await store.complete(lease, jsonResponse);
      await advance(past(retentionMs));

      const next = acquired(await store.begin(identity, digestOf('b'), timing));
      assert.notEqual(next.ownerToken, lease.ownerToken);
      assert.equal((await store.begin(identity, digestOf('b'), timing)).kind, 'in_progress');
      assert.deepEqual(await store.begin(identity, digestOf('a'), timing), { kind: 'mismatch' });
    },

    'purgeExpired removes only expired records, in batches': async ({ store, advance }) => {
      const short = { leaseTtlMs, retentionMs };
      const long = { leaseTtlMs: leaseTtlMs * 100, retentionMs: retentionMs * 100 };
      const expiring = Array.from({ length: 3 }, () => newIdentity('purge-expired'));
      for (const identity of expiring) {
        await store.complete(
          acquired(await store.begin(identity, digestOf('a'), short)),
          jsonResponse,
        );
      }
      const abandoned = newIdentity('purge-abandoned');
      acquired(await store.begin(abandoned, digestOf('a'), short));
      const keptCompleted = newIdentity('purge-kept');
      await store.complete(
        acquired(await store.begin(keptCompleted, digestOf('a'), long)),
        jsonResponse,
      );
      const keptInProgress = newIdentity('purge-working');
      acquired(await store.begin(keptInProgress, digestOf('a'), long));
      await advance(past(Math.max(leaseTtlMs, retentionMs)));

      const purged = [
        await store.purgeExpired(3),
        await store.purgeExpired(3),
        await store.purgeExpired(3),
      ];

      assert.deepEqual(purged, options.expiresNatively ? [0, 0, 0] : [3, 1, 0]);
      for (const identity of [...expiring, abandoned]) {
        acquired(await store.begin(identity, digestOf('b'), short));
      }
      assertSameResponse(
        replayed(await store.begin(keptCompleted, digestOf('a'), long)),
        jsonResponse,
      );
      assert.equal((await store.begin(keptInProgress, digestOf('a'), long)).kind, 'in_progress');
    },

    'round-trips a JSON body exactly': roundTrip(jsonResponse),
    'round-trips an empty body': roundTrip({ status: 204, headers: {}, body: { kind: 'empty' } }),
    'round-trips a 1 MB binary body byte for byte': roundTrip({
      status: 200,
      headers: { 'content-type': 'application/octet-stream' },
      body: { kind: 'bytes', value: oneMegabyteOfEveryByte() },
    }),
    'round-trips Unicode text as bytes and as JSON': async (harness) => {
      await roundTrip(textResponse)(harness);
      await roundTrip({
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: { kind: 'json', value: { [unicodeText]: unicodeText, list: [unicodeText] } },
      })(harness);
    },
    'round-trips status and headers': roundTrip({
      status: 422,
      headers: {
        'content-type': 'application/problem+json',
        location: '/orders/77?tab=items&lang=de',
        'x-request-cost': '0',
        'x-empty': '',
        'content-disposition': "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf",
        'x-latin1': 'café',
      },
      body: { kind: 'json', value: { type: 'about:blank', title: 'Unprocessable', status: 422 } },
    }),
  };

  function roundTrip(response: StoredResponse) {
    return async ({ store }: IdempotencyRecordStoreHarness) => {
      const identity = newIdentity('round-trip');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));
      await store.complete(lease, response);
      assertSameResponse(replayed(await store.begin(identity, digestOf('a'), timing)), response);
    };
  }

  return Object.entries(cases).map(([name, body]) => ({ name, run: withHarness(body) }));
}

const unicodeText =
  'Grüße, 世界 👋🏽 — e\u0301 ≠ é, עברית, \u0000 nul, \uFEFF bom, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, "quotes" \\ \n\t';

const jsonResponse: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', location: '/orders/77' },
  body: {
    kind: 'json',
    value: {
      id: 77,
      zeta: 'keys keep their order',
      alpha: [1, 2.5, -3e-7, 12345678901234, true, false, null, '', {}],
      nested: { deep: { deeper: ['x', { y: 'z' }] } },
      note: 'Grüße 👋',
    },
  },
};

const textResponse: StoredResponse = {
  status: 200,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body: { kind: 'bytes', value: new TextEncoder().encode(unicodeText) },
};

function oneMegabyteOfEveryByte(): Uint8Array {
  const bytes = new Uint8Array(randomBytes(1024 * 1024));
  for (let value = 0; value < 256; value += 1) bytes[value] = value;
  return bytes;
}

function newIdentity(label: string): string {
  return `contract:${label}:${randomUUID()}`;
}

function digestOf(payload: string): string {
  return createHash('sha256').update(payload).digest('hex');
}

function acquired(outcome: BeginOutcome): RecordLease {
  assert.equal(outcome.kind, 'acquired', `expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

function replayed(outcome: BeginOutcome): StoredResponse {
  assert.equal(outcome.kind, 'replay', `expected replay, got ${outcome.kind}`);
  return outcome.response;
}

function leaseOf(outcome: BeginOutcome): RecordLease | undefined {
  return outcome.kind === 'acquired' ? outcome.lease : undefined;
}

function countKinds(outcomes: BeginOutcome[]): Partial<Record<BeginOutcome['kind'], number>> {
  const counts: Partial<Record<BeginOutcome['kind'], number>> = {};
  for (const { kind } of outcomes) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

async function assertLeaseLost(attempt: Promise<unknown>, lease: RecordLease): Promise<void> {
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(error instanceof LeaseLostError, `expected LeaseLostError, got ${String(error)}`);
    assert.equal(error.identity, lease.identity);
    assert.equal(error.fence, lease.fence);
    return true;
  });
}

/** Compares bytes as bytes, whatever `Uint8Array` subclass (e.g. `Buffer`) the store returns. */
function assertSameResponse(actual: StoredResponse, expected: StoredResponse): void {
  assert.equal(actual.status, expected.status);
  assert.deepEqual(Object.entries(actual.headers), Object.entries(expected.headers));
  assert.equal(actual.body.kind, expected.body.kind);
  if (expected.body.kind === 'bytes' && actual.body.kind === 'bytes') {
    assert.ok(actual.body.value instanceof Uint8Array, 'a bytes body is not a Uint8Array');
    assert.equal(actual.body.value.byteLength, expected.body.value.byteLength);
    assert.ok(
      Buffer.from(
        actual.body.value.buffer,
        actual.body.value.byteOffset,
        actual.body.value.byteLength,
      ).equals(expected.body.value),
      'the bytes differ',
    );
  } else if (expected.body.kind === 'json' && actual.body.kind === 'json') {
    assert.deepEqual(actual.body.value, expected.body.value);
    assert.equal(JSON.stringify(actual.body.value), JSON.stringify(expected.body.value));
  }
}
