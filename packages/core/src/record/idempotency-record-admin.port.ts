import type { StoredResponse } from './stored-response.js';

/**
 * Operator access to durable idempotency records, next to `IdempotencyRecordStore`: what the
 * record of an identity holds, and freeing one stuck in progress. Implemented by the in-memory
 * store, `RedisIdempotencyRecordAdmin` (`@oncely/redis`) and `TypeOrmIdempotencyRecordAdmin`
 * (`@oncely/typeorm`); use it through `OncelyAdmin`.
 */
export interface IdempotencyRecordAdmin {
  /** The record of `identity` as stored now; expired records are reported as `absent`. */
  inspect(identity: string): Promise<RecordInspection>;

  /**
   * Deletes the record of `identity` if it is in progress, whoever holds it: its holder can no
   * longer confirm (its fenced `complete` fails) and the next request runs again. A completed
   * record is left alone (it is the proof the work happened).
   */
  forceRelease(identity: string): Promise<ForceReleaseOutcome>;
}

/** What `IdempotencyRecordAdmin.inspect` found for an identity. */
export type RecordInspection =
  | {
      /** No record, or only an expired one: the next request runs. */
      readonly kind: 'absent';
      /** SHA-256 hex of the identity, as the store indexes it. */
      readonly keyHash: string;
    }
  | {
      /** A request holds the record and has not completed. */
      readonly kind: 'in_progress';
      /** SHA-256 hex of the identity, as the store indexes it. */
      readonly keyHash: string;
      /** Full SHA-256 hex of the input that claimed the record. */
      readonly fingerprint: string;
      /** The claiming service, when the record carries one. */
      readonly owner?: string;
      /** Fencing token of the current holder's lease. */
      readonly fence: number;
      /** When the holder's lease runs out unless renewed; another request may then take over. */
      readonly leaseExpiresAt: Date;
    }
  | {
      /** The work happened; requests with the same input get its response. */
      readonly kind: 'completed';
      /** SHA-256 hex of the identity, as the store indexes it. */
      readonly keyHash: string;
      /** Full SHA-256 hex of the input that completed the record. */
      readonly fingerprint: string;
      /** The claiming service, when the record carries one. */
      readonly owner?: string;
      /** Fencing token of the lease that completed it. */
      readonly fence: number;
      /** When the record stops being replayed. */
      readonly expiresAt: Date;
      /** The response kept for replays. */
      readonly response: StoredResponse;
    };

/** What `IdempotencyRecordAdmin.forceRelease` did. */
export type ForceReleaseOutcome =
  | {
      /** An in-progress record was deleted; its holder can no longer complete it. */
      readonly kind: 'released';
      /** Fencing token of the lease that was taken away. */
      readonly fence: number;
    }
  | {
      /** The record is completed and was left alone. */
      readonly kind: 'completed';
    }
  | {
      /** There was no record to release. */
      readonly kind: 'absent';
    };

/** Whether `store` also offers the admin methods. */
export function isIdempotencyRecordAdmin(store: object): store is IdempotencyRecordAdmin {
  const candidate = store as Partial<IdempotencyRecordAdmin>;
  return typeof candidate.inspect === 'function' && typeof candidate.forceRelease === 'function';
}
