import type { StoredResponse } from './stored-response.js';

/**
 * Durable idempotency records: one record per identity, under a unique constraint, which is the
 * lock. Implementations: `InMemoryIdempotencyRecordStore` (embedded default),
 * `TypeOrmIdempotencyRecordStore` in `@oncely/typeorm`, `RedisIdempotencyRecordStore` in
 * `@oncely/redis`. All durations are milliseconds. Expired records are treated as absent.
 */
export interface IdempotencyRecordStore {
  /**
   * Claims `identity` for the caller, or says why not. `digest` is the full SHA-256 hex of the
   * canonical input: a record with the same identity and another digest is a `mismatch` and is
   * left untouched. An in-progress record whose lease expired is taken over with a higher fence.
   *
   * With `options.previousIdentities` (the same request's identities under a route's previous
   * versions), a miss on `identity` consults those records, in order, before `identity` is
   * claimed: a live one answers as if it were `identity`'s own (`replay` naming it in
   * `previousIdentity`, `in_progress`, or `mismatch`) and nothing is claimed; an in-progress one
   * whose lease expired is deleted, so its holder can no longer confirm. A store checks and claims
   * in one atomic step where it can; otherwise it claims `identity` first and then checks,
   * releasing its claim when a previous record answers, so that two begins each listing the
   * other's identity never both acquire.
   *
   * With `options.owner`, the record claimed carries it, and a live record (of the identity or a
   * previous one) carrying another owner answers `foreign_owner` before anything else is
   * compared: it is neither replayed nor overwritten. A record without an owner (written by an app
   * that names no service) counts as the caller's own, and so does one whose owner is among
   * `options.ownerAliases`; `options.shared` accepts every owner.
   */
  begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome>;

  /**
   * Optional: the response `begin` would replay now from `identity`'s own record (completed, the
   * same digest, an owner `options` accept), answered at once from what this process holds,
   * with nothing claimed and no round trip; `undefined` for anything else (no such record known
   * here, another digest or owner, a record in flight), which `begin` then decides. The executor
   * asks it before `begin` on every call, so it must be cheap and must never answer a record
   * `begin` would no longer replay (expired, purged, released by an operator). Unlike `begin`'s,
   * its answer may be one object shared by every peek of a record (`sharedReplayOf`): callers
   * read it and never change it.
   */
  peekReplay?(identity: string, digest: string, options: BeginOptions): StoredResponse | undefined;

  /**
   * Stores the response and marks the record completed, if `lease` still holds it (same owner
   * token and fence). Throws `LeaseLostError` otherwise, and stores nothing.
   */
  complete(lease: RecordLease, response: StoredResponse): Promise<void>;

  /** Deletes the record if `lease` still holds it (a transient failure: a retry runs again). */
  release(lease: RecordLease): Promise<void>;

  /** Extends the lease if it is still held; `false` means it was lost. */
  renew(lease: RecordLease, leaseTtlMs: number): Promise<boolean>;

  /** Deletes up to `batchSize` expired records; returns how many were deleted. */
  purgeExpired(batchSize: number): Promise<number>;

  /**
   * `true` for a store whose `begin` answers from memory: one round trip to an in-memory server
   * (Redis), or none (the embedded store). A result cache in front of it cannot answer faster,
   * so the executor calls it directly on routes that refuse in-flight duplicates, instead of
   * putting the coordinator's guard flight (two more round trips) in front of it.
   */
  readonly answersAtCacheSpeed?: boolean;

  /**
   * Optional start-up hook, run once by the engine's `start()` before the app serves requests:
   * checks that the backend is ready for this version (a table created and migrated, …) and
   * starts the store's own background work. Rejects with an `OncelyConfigurationError` saying
   * how to fix the backend, so a store that cannot work fails the boot instead of every request.
   */
  start?(): Promise<void>;

  /**
   * Optional: stops the store's background work and closes the clients it created itself, never
   * a client or DataSource it was given. Run once by the engine's `close()`.
   */
  close?(): Promise<void>;

  /**
   * Optional: what the store works on, for the start-up line (`BackendReport.describe`),
   * e.g. `TypeORM postgres db:5432/shop (table oncely_idempotency_record)`; never a secret.
   */
  describe?(): string;

  /**
   * Optional: resolves once the backend answers, rejects within `timeoutMs` when it does not
   * (`BackendReport.probe`); the start-up then warns once and boots anyway.
   */
  probe?(timeoutMs: number): Promise<void>;
}

/** The durations of one `IdempotencyRecordStore.begin`, from the route's options. */
export interface BeginOptions {
  /** How long the caller holds the record while it works. */
  readonly leaseTtlMs: number;
  /** How long a completed record is kept (and replayed) after completion. */
  readonly retentionMs: number;
  /**
   * Identities whose live records answer for this one when it has none: the same request under a
   * route's `previousVersions`, newest first. Never claimed, only read (and an abandoned one
   * deleted). At most a handful; each is one more record to read on a miss.
   */
  readonly previousIdentities?: readonly string[];
  /**
   * The service claiming the record (the app's `service`): stored with it, and compared with the
   * owner of a live record found under the identity. Leave it out to compare no owners.
   */
  readonly owner?: string;
  /**
   * Other owners whose records answer as the caller's own (the app's `serviceAliases`, while the
   * service is renamed); the record keeps the owner it has. Only read along with `owner`.
   */
  readonly ownerAliases?: ReadonlySet<string>;
  /** The route declares `shared: true`: records of other owners answer as the caller's own. */
  readonly shared?: boolean;
}

/** Proof of holding a record; pass it back to `complete`, `release` and `renew`. */
export interface RecordLease {
  /** The record identity held (the business key without its fingerprint). */
  readonly identity: string;
  /** SHA-256 hex of the identity: the unique column. */
  readonly keyHash: string;
  /** Random token of this holder; the store checks it with the fence on every change. */
  readonly ownerToken: string;
  /** Grows on every takeover; `complete` only succeeds with the current one. */
  readonly fence: number;
  /** When the lease runs out unless renewed; another request may then take the record over. */
  readonly leaseExpiresAt: Date;
}

/** What `IdempotencyRecordStore.begin` decided. */
export type BeginOutcome =
  | {
      /** The record is the caller's: it runs the handler, then completes or releases it. */
      readonly kind: 'acquired';
      /** What the caller passes back to `complete`, `release` and `renew`. */
      readonly lease: RecordLease;
    }
  | {
      /** A completed record with the same digest: the caller answers with its response. */
      readonly kind: 'replay';
      /** The response kept by the first request. */
      readonly response: StoredResponse;
      /** The record replayed, when it is one of `previousIdentities` rather than the identity. */
      readonly previousIdentity?: string;
    }
  | {
      /** A record with the same identity and another digest; it is left untouched. */
      readonly kind: 'mismatch';
    }
  | {
      /**
       * A live record of another service (`BeginOptions.owner`) under the identity: two services
       * claim one key space. It is left untouched, and nothing is claimed.
       */
      readonly kind: 'foreign_owner';
      /** The service whose record it is. */
      readonly owner: string;
      /** The record met, when it is one of `previousIdentities` rather than the identity. */
      readonly previousIdentity?: string;
    }
  | {
      /** Another request holds the record and its lease is still valid. */
      readonly kind: 'in_progress';
      /** Time left on that lease: when a retry may find the record completed or free. */
      readonly retryAfterMs: number;
    };
