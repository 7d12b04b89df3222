/**
 * One durable idempotency record, a row of `oncely_idempotency_record`. Times are epoch
 * milliseconds (UTC) in `bigint` columns: one portable, timezone-free representation that compares
 * exactly on every supported database.
 *
 * The table's column types differ per database (no single large-binary type exists on all three),
 * so the TypeORM entity is the `EntitySchema` that `idempotencyRecordEntity(type)` builds for a
 * DataSource's type; `withIdempotencyRecords` registers it for you.
 */
export class IdempotencyRecord {
  /** Surrogate primary key; records are found by `keyHash`. */
  id!: number;
  /** SHA-256 hex of `key`; the unique index that makes `begin` a lock. */
  keyHash!: string;
  /** The identity (business key or scoped Idempotency-Key). */
  key!: string;
  /** SHA-256 hex of the canonical request payload. */
  fingerprint!: string;
  /** Whether the handler is still running under a lease or the response is kept. */
  status!: IdempotencyRecordStatus;
  /** Random token of the lease holder; checked with the fence on every change. */
  ownerToken!: string;
  /**
   * The service that claimed the record (its `service` option); `null` for a record written
   * by an app that names no service, which counts as every service's own.
   */
  owner!: string | null;
  /** Grows on every takeover; a confirmation must carry the current one. */
  fence!: number;
  /** When the holder's lease runs out unless renewed; another request may then take over. */
  leaseExpiresAt!: number;
  /** How long the record is kept once completed. */
  retentionMs!: number;
  /** The kept response's HTTP status; `null` while in progress. */
  responseStatus!: number | null;
  /** JSON object text of the replayed headers, in their original order. */
  responseHeaders!: string | null;
  /** `empty`, `json` (body holds the exact JSON text as UTF-8) or `bytes`. */
  responseBodyKind!: string | null;
  /** The kept body's bytes; `null` while in progress or for an empty body. */
  responseBody!: Buffer | null;
  /** When the record was claimed (by its current holder, after a takeover). */
  createdAt!: number;
  /** When the response was kept; `null` while in progress. */
  completedAt!: number | null;
  /** The lease's end while in progress, the retention's end once completed; purged after it. */
  expiresAt!: number;
}

/** A record is claimed `in_progress` and becomes `completed` with its response, or is deleted. */
export type IdempotencyRecordStatus = 'in_progress' | 'completed';
