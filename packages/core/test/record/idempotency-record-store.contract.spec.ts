import { AssertionError } from 'node:assert';
import {
  InMemoryIdempotencyRecordStore,
  type BeginOptions,
  type BeginOutcome,
  type IdempotencyRecordStore,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import type { Clock } from '@oncely/core/adapter';
import { idempotencyRecordStoreContract } from '@oncely/core/testing';

class FakeClock implements Clock {
  private current = 1_750_000_000_000;
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** Delegates everything to a correct store; each broken store overrides one behaviour. */
class DelegatingStore implements IdempotencyRecordStore {
  constructor(protected readonly inner: InMemoryIdempotencyRecordStore) {}
  begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome> {
    return this.inner.begin(identity, digest, options);
  }
  complete(lease: RecordLease, response: StoredResponse): Promise<void> {
    return this.inner.complete(lease, response);
  }
  release(lease: RecordLease): Promise<void> {
    return this.inner.release(lease);
  }
  renew(lease: RecordLease, leaseTtlMs: number): Promise<boolean> {
    return this.inner.renew(lease, leaseTtlMs);
  }
  purgeExpired(batchSize: number): Promise<number> {
    return this.inner.purgeExpired(batchSize);
  }
}

/** Confirms with whatever lease currently holds the record: no fencing. */
class UnfencedStore extends DelegatingStore {
  private readonly latest = new Map<string, RecordLease>();
  override async begin(identity: string, digest: string, options: BeginOptions) {
    const outcome = await this.inner.begin(identity, digest, options);
    if (outcome.kind === 'acquired') this.latest.set(outcome.lease.keyHash, outcome.lease);
    return outcome;
  }
  override complete(lease: RecordLease, response: StoredResponse) {
    return this.inner.complete(this.latest.get(lease.keyHash) ?? lease, response);
  }
}

/** Lets everyone in: an in-progress record does not stop anybody. */
class LockFreeStore extends DelegatingStore {
  override async begin(identity: string, digest: string, options: BeginOptions) {
    const outcome = await this.inner.begin(identity, digest, options);
    if (outcome.kind !== 'in_progress') return outcome;
    const lease: RecordLease = {
      identity,
      keyHash: 'x',
      ownerToken: 'x',
      fence: 1,
      leaseExpiresAt: new Date(),
    };
    return { kind: 'acquired' as const, lease };
  }
}

/** Ignores the digest once a record exists. */
class DigestBlindStore extends DelegatingStore {
  private readonly digests = new Map<string, string>();
  override begin(identity: string, digest: string, options: BeginOptions) {
    const first = this.digests.get(identity) ?? digest;
    this.digests.set(identity, first);
    return this.inner.begin(identity, first, options);
  }
}

/** Stores bytes as UTF-8 text, which mangles anything that is not valid UTF-8. */
class TextOnlyStore extends DelegatingStore {
  override complete(lease: RecordLease, response: StoredResponse) {
    if (response.body.kind !== 'bytes') return this.inner.complete(lease, response);
    const text = Buffer.from(response.body.value).toString('utf8');
    return this.inner.complete(lease, {
      ...response,
      body: { kind: 'bytes', value: Buffer.from(text, 'utf8') },
    });
  }
}

/** Keeps completed records forever. */
class NeverExpiringStore extends DelegatingStore {
  private readonly completed = new Map<string, StoredResponse>();
  override async begin(identity: string, digest: string, options: BeginOptions) {
    const response = this.completed.get(identity);
    if (response) return { kind: 'replay' as const, response };
    return this.inner.begin(identity, digest, options);
  }
  override async complete(lease: RecordLease, response: StoredResponse) {
    await this.inner.complete(lease, response);
    this.completed.set(lease.identity, response);
  }
}

/** Never looks at the records of previous versions. */
class PreviousBlindStore extends DelegatingStore {
  override begin(identity: string, digest: string, options: BeginOptions) {
    return this.inner.begin(identity, digest, { ...options, previousIdentities: [] });
  }
}

/** Claims the identity first, checks the previous ones, and forgets to give its claim back. */
class ClaimKeepingStore extends DelegatingStore {
  override async begin(identity: string, digest: string, options: BeginOptions) {
    const claim = await this.inner.begin(identity, digest, { ...options, previousIdentities: [] });
    if (claim.kind !== 'acquired') return claim;
    for (const previous of options.previousIdentities ?? []) {
      const answer = await this.inner.begin(previous, digest, options);
      if (answer.kind === 'acquired') await this.inner.release(answer.lease);
      else return answer;
    }
    return claim;
  }
}

/** Checks the previous records first and claims afterwards, in two steps. */
class CheckThenClaimStore extends DelegatingStore {
  override async begin(identity: string, digest: string, options: BeginOptions) {
    for (const previous of options.previousIdentities ?? []) {
      const answer = await this.inner.begin(previous, digest, timingOf(options));
      if (answer.kind !== 'acquired') return answer;
      await this.inner.release(answer.lease);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    return this.inner.begin(identity, digest, timingOf(options));
  }
}

function timingOf({ leaseTtlMs, retentionMs }: BeginOptions): BeginOptions {
  return { leaseTtlMs, retentionMs };
}

/** Purges everything at once, ignoring the batch size. */
class UnbatchedPurgeStore extends DelegatingStore {
  override purgeExpired() {
    return this.inner.purgeExpired(Number.MAX_SAFE_INTEGER);
  }
}

function contractFor(build: (inner: InMemoryIdempotencyRecordStore) => IdempotencyRecordStore) {
  return idempotencyRecordStoreContract(async () => {
    const clock = new FakeClock();
    return {
      store: build(new InMemoryIdempotencyRecordStore({ clock })),
      advance: async (ms) => clock.advance(ms),
      cleanup: async () => undefined,
    };
  });
}

describe('idempotencyRecordStoreContract', () => {
  it('names every case once', () => {
    const names = contractFor((inner) => inner).map(({ name }) => name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each<[string, (inner: InMemoryIdempotencyRecordStore) => IdempotencyRecordStore, string]>([
    [
      'without fencing',
      (inner) => new UnfencedStore(inner),
      'the previous owner can neither complete, release nor renew after a takeover',
    ],
    [
      'without a lock',
      (inner) => new LockFreeStore(inner),
      'exactly one of concurrent begins acquires, the others are in_progress',
    ],
    [
      'blind to the digest',
      (inner) => new DigestBlindStore(inner),
      'begin reports mismatch for another digest and leaves the record untouched',
    ],
    [
      'that stores bytes as text',
      (inner) => new TextOnlyStore(inner),
      'round-trips a 1 MB binary body byte for byte',
    ],
    [
      'that never expires completed records',
      (inner) => new NeverExpiringStore(inner),
      'an expired completed record is treated as absent',
    ],
    [
      'blind to previous versions',
      (inner) => new PreviousBlindStore(inner),
      'a miss replays the completed record of a previous identity, naming it, and claims nothing',
    ],
    [
      'that keeps its claim when a previous version answers',
      (inner) => new ClaimKeepingStore(inner),
      'a miss answers in_progress while the previous record is in flight, then replays it',
    ],
    [
      'that checks previous versions and claims in two steps',
      (inner) => new CheckThenClaimStore(inner),
      'of concurrent begins on two identities each listing the other, at most one acquires',
    ],
    [
      'that ignores the purge batch size',
      (inner) => new UnbatchedPurgeStore(inner),
      'purgeExpired removes only expired records, in batches',
    ],
  ])('fails a store %s', async (_, build, caseName) => {
    const contractCase = contractFor(build).find(({ name }) => name === caseName);

    await expect(contractCase?.run()).rejects.toBeInstanceOf(AssertionError);
  });
});
