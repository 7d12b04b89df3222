import type {
  BeginOptions,
  BeginOutcome,
  IdempotencyRecordStore,
  RecordLease,
} from '../record/idempotency-record-store.port.js';
import type { StoredResponse } from '../record/stored-response.js';
import {
  isTransactionalRecordStore,
  type TransactionalCompletion,
  type TransactionalIdempotencyRecordStore,
} from '../record/transactional-idempotency-record-store.port.js';
import {
  isIdempotencyRecordAdmin,
  type ForceReleaseOutcome,
  type IdempotencyRecordAdmin,
  type RecordInspection,
} from '../record/idempotency-record-admin.port.js';

/**
 * Base of the stores that wrap another `IdempotencyRecordStore`: every call goes to the wrapped
 * store, and its transactional and admin abilities stay visible through the wrapper (a wrapper
 * that hid them would silently turn a transactional route non-transactional). Subclasses
 * override only the calls they change.
 */
export abstract class ForwardingIdempotencyRecordStore implements IdempotencyRecordStore {
  /** Present when the wrapped store is transactional (see `TransactionalIdempotencyRecordStore`). */
  readonly runInTransaction?: <T>(
    lease: RecordLease,
    work: (transaction: unknown) => Promise<TransactionalCompletion<T>>,
  ) => Promise<T>;
  /** Present when the wrapped store has admin methods. */
  readonly inspect?: (identity: string) => Promise<RecordInspection>;
  /** Present when the wrapped store has admin methods. */
  readonly forceRelease?: (identity: string) => Promise<ForceReleaseOutcome>;
  /** Present when the wrapped store has it; what it peeks passes `peekedReplay`. */
  readonly peekReplay?: (
    identity: string,
    digest: string,
    options: BeginOptions,
  ) => StoredResponse | undefined;
  readonly answersAtCacheSpeed?: boolean;
  /** Present when the wrapped store has them: a wrapped store still checks and closes itself. */
  readonly start?: () => Promise<void>;
  readonly close?: () => Promise<void>;

  protected constructor(protected readonly store: IdempotencyRecordStore) {
    if (store.answersAtCacheSpeed === true) this.answersAtCacheSpeed = true;
    if (store.peekReplay) {
      const peekReplay = store.peekReplay.bind(store);
      this.peekReplay = (identity, digest, options) => {
        const response = peekReplay(identity, digest, options);
        return response && this.peekedReplay(identity, response);
      };
    }
    if (store.start) this.start = async () => await store.start?.();
    if (store.close) this.close = async () => await store.close?.();
    if (isTransactionalRecordStore(store)) {
      this.runInTransaction = (lease, work) => this.runInStoreTransaction(store, lease, work);
    }
    if (isIdempotencyRecordAdmin(store)) {
      this.inspect = (identity) => this.inspectStore(store, identity);
      this.forceRelease = (identity) => store.forceRelease(identity);
    }
  }

  begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome> {
    return this.store.begin(identity, digest, options);
  }

  complete(lease: RecordLease, response: StoredResponse): Promise<void> {
    return this.store.complete(lease, response);
  }

  release(lease: RecordLease): Promise<void> {
    return this.store.release(lease);
  }

  renew(lease: RecordLease, leaseTtlMs: number): Promise<boolean> {
    return this.store.renew(lease, leaseTtlMs);
  }

  purgeExpired(batchSize: number): Promise<number> {
    return this.store.purgeExpired(batchSize);
  }

  /** What a replay the wrapped store peeked answers with; `undefined` leaves it to `begin`. */
  protected peekedReplay(_identity: string, response: StoredResponse): StoredResponse | undefined {
    return response;
  }

  protected runInStoreTransaction<T>(
    store: TransactionalIdempotencyRecordStore,
    lease: RecordLease,
    work: (transaction: unknown) => Promise<TransactionalCompletion<T>>,
  ): Promise<T> {
    return store.runInTransaction(lease, work);
  }

  protected inspectStore(
    admin: IdempotencyRecordAdmin,
    identity: string,
  ): Promise<RecordInspection> {
    return admin.inspect(identity);
  }
}
