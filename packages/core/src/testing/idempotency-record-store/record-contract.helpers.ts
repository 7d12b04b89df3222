import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { LeaseLostError } from '../../errors/lease-lost.error.js';
import type {
  BeginOptions,
  BeginOutcome,
  IdempotencyRecordStore,
  RecordLease,
} from '../../record/idempotency-record-store.port.js';
import type { StoredResponse } from '../../record/stored-response.js';

export function newIdentity(label: string): string {
  return `contract:${label}:${randomUUID()}`;
}

export function digestOf(payload: string): string {
  return createHash('sha256').update(payload).digest('hex');
}

export function acquired(outcome: BeginOutcome): RecordLease {
  assert.equal(outcome.kind, 'acquired', `expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

export function replayed(outcome: BeginOutcome): StoredResponse {
  assert.equal(outcome.kind, 'replay', `expected replay, got ${outcome.kind}`);
  return outcome.response;
}

export function leaseOf(outcome: BeginOutcome): RecordLease | undefined {
  return outcome.kind === 'acquired' ? outcome.lease : undefined;
}

export function countKinds(
  outcomes: BeginOutcome[],
): Partial<Record<BeginOutcome['kind'], number>> {
  const counts: Partial<Record<BeginOutcome['kind'], number>> = {};
  for (const { kind } of outcomes) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

export async function assertLeaseLost(
  attempt: Promise<unknown>,
  lease: RecordLease,
): Promise<void> {
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(error instanceof LeaseLostError, `expected LeaseLostError, got ${String(error)}`);
    assert.equal(error.identity, lease.identity);
    assert.equal(error.fence, lease.fence);
    return true;
  });
}

/** Compares bytes as bytes, whatever `Uint8Array` subclass (e.g. `Buffer`) the store returns. */
export function assertSameResponse(actual: StoredResponse, expected: StoredResponse): void {
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

/** `begin` with `digest` replays exactly `expected` (default digest `a`, as the cases use). */
export async function assertReplays(
  store: IdempotencyRecordStore,
  identity: string,
  options: BeginOptions,
  expected: StoredResponse,
  digest = digestOf('a'),
): Promise<void> {
  assertSameResponse(replayed(await store.begin(identity, digest, options)), expected);
}
