import type {
  BeginOptions,
  BeginOutcome,
  IdempotencyRecordStore,
  RecordLease,
} from '../record/idempotency-record-store.port.js';
import type { StoredResponse } from '../record/stored-response.js';
import type {
  TransactionalCompletion,
  TransactionalIdempotencyRecordStore,
} from '../record/transactional-idempotency-record-store.port.js';
import { EncryptionKeyring, type EncryptionOptions } from './encryption-keyring.js';
import { ForwardingIdempotencyRecordStore } from './forwarding-idempotency-record.store.js';
import type {
  IdempotencyRecordAdmin,
  RecordInspection,
} from '../record/idempotency-record-admin.port.js';
import { SealedDataError } from './sealed-data.error.js';
import { openResponse, sealResponse } from './sealed-response.js';

/** Options of `EncryptedIdempotencyRecordStore`: the keys, and how to treat older records. */
export interface EncryptedRecordStoreOptions extends EncryptionOptions {
  /**
   * Replay records written before encryption was turned on, as they are. Leave it off once
   * those have expired: with it on, a record written around the encryption is trusted.
   */
  readonly acceptUnsealed?: boolean;
}

interface OpenedPeek {
  readonly identity: string;
  readonly response: StoredResponse;
}

/**
 * Encryption at rest for any `IdempotencyRecordStore`: stored responses (headers and body) are
 * sealed with AES-256-GCM before they reach the store and opened on replay; identities, digests,
 * fences and statuses stay in clear, so the store's own logic is unchanged. Keeps the store's
 * transactional and admin abilities when it has them. A record that does not open (altered,
 * unknown key) fails the call with `SealedDataError` and is never replayed.
 */
export class EncryptedIdempotencyRecordStore extends ForwardingIdempotencyRecordStore {
  readonly #keyring: EncryptionKeyring;
  readonly #acceptUnsealed: boolean;
  /**
   * Each peeked response opened once, under the identity it was opened for: a store that shares
   * its peeks (`sharedReplayOf`) is decrypted once per record, not once per replay.
   */
  readonly #openedPeeks = new WeakMap<StoredResponse, OpenedPeek>();

  constructor(store: IdempotencyRecordStore, options: EncryptedRecordStoreOptions) {
    super(store);
    this.#keyring = new EncryptionKeyring('EncryptedIdempotencyRecordStore', options);
    this.#acceptUnsealed = options.acceptUnsealed === true;
  }

  /** Begins on the wrapped store and opens a replay's sealed response. */
  override async begin(
    identity: string,
    digest: string,
    options: BeginOptions,
  ): Promise<BeginOutcome> {
    const outcome = await this.store.begin(identity, digest, options);
    if (outcome.kind !== 'replay') return outcome;
    // Sealed under the identity it was stored for: a previous version's record under its own.
    const sealedFor = outcome.previousIdentity ?? identity;
    return { ...outcome, response: this.#open(sealedFor, outcome.response) };
  }

  /** Opens a peeked replay; one that does not open is left to `begin`, which reports it. */
  protected override peekedReplay(
    identity: string,
    response: StoredResponse,
  ): StoredResponse | undefined {
    try {
      const known = this.#openedPeeks.get(response);
      if (known?.identity === identity) return known.response;
      const opened = this.#open(identity, response);
      this.#openedPeeks.set(response, { identity, response: opened });
      return opened;
    } catch (error) {
      if (error instanceof SealedDataError) return undefined;
      throw error;
    }
  }

  /** Seals the response, bound to the lease's identity, and completes with it. */
  override complete(lease: RecordLease, response: StoredResponse): Promise<void> {
    return this.store.complete(lease, sealResponse(this.#keyring, lease.identity, response));
  }

  /** An inspection of the wrapped store's admin, with its response opened. */
  openInspection(identity: string, inspection: RecordInspection): RecordInspection {
    if (inspection.kind !== 'completed') return inspection;
    return { ...inspection, response: this.#open(identity, inspection.response) };
  }

  protected override runInStoreTransaction<T>(
    store: TransactionalIdempotencyRecordStore,
    lease: RecordLease,
    work: (transaction: unknown) => Promise<TransactionalCompletion<T>>,
  ): Promise<T> {
    return store.runInTransaction(lease, async (transaction) => {
      const { response, result } = await work(transaction);
      return { response: sealResponse(this.#keyring, lease.identity, response), result };
    });
  }

  protected override async inspectStore(
    admin: IdempotencyRecordAdmin,
    identity: string,
  ): Promise<RecordInspection> {
    return this.openInspection(identity, await admin.inspect(identity));
  }

  #open(identity: string, response: StoredResponse): StoredResponse {
    return openResponse(this.#keyring, identity, response, this.#acceptUnsealed);
  }
}
