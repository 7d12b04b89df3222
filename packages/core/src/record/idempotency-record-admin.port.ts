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

export type RecordInspection =
  | { readonly kind: 'absent'; readonly keyHash: string }
  | {
      readonly kind: 'in_progress';
      readonly keyHash: string;
      /** Full SHA-256 hex of the input that claimed the record. */
      readonly fingerprint: string;
      readonly fence: number;
      readonly leaseExpiresAt: Date;
    }
  | {
      readonly kind: 'completed';
      readonly keyHash: string;
      readonly fingerprint: string;
      readonly fence: number;
      /** When the record stops being replayed. */
      readonly expiresAt: Date;
      readonly response: StoredResponse;
    };

export type ForceReleaseOutcome =
  | { readonly kind: 'released'; readonly fence: number }
  | { readonly kind: 'completed' }
  | { readonly kind: 'absent' };

/** Whether `store` also offers the admin methods. */
export function isIdempotencyRecordAdmin(store: object): store is IdempotencyRecordAdmin {
  const candidate = store as Partial<IdempotencyRecordAdmin>;
  return typeof candidate.inspect === 'function' && typeof candidate.forceRelease === 'function';
}
