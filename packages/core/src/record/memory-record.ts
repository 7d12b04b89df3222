import { ENTRY_OVERHEAD_BYTES, textBytes } from '../memory/held-bytes.js';
import { foreignOwnerOf } from './foreign-owner-of.js';
import type { BeginOptions, BeginOutcome } from './idempotency-record-store.port.js';
import type { StoredResponse } from './stored-response.js';
import {
  decodeStoredResponse,
  encodedResponseBytes,
  type EncodedResponse,
} from './stored-response.codec.js';

/** One record of `InMemoryIdempotencyRecordStore`, and what it answers. */
export interface MemoryRecord {
  /** The identity it was claimed under, for listings by operation. */
  readonly identity: string;
  readonly fingerprint: string;
  /** The service that claimed it (`BeginOptions.owner`), when it said. */
  readonly owner?: string;
  readonly ownerToken: string;
  readonly fence: number;
  readonly retentionMs: number;
  /** The lease's end while in progress, the retention's end once completed. */
  expiresAt: number;
  response?: EncodedResponse;
}

/**
 * What a live record answers a `begin` with `digest`; `undefined` once it expired. A replay is
 * `replayOf` its response: by default a copy of its own for the caller.
 */
export function answerOf(
  record: MemoryRecord,
  digest: string,
  now: number,
  options: BeginOptions,
  replayOf: (response: EncodedResponse) => StoredResponse = ownCopyOf,
): BeginOutcome | undefined {
  if (record.expiresAt <= now) return undefined;
  const foreign = foreignOwnerOf(record.owner, options);
  if (foreign !== undefined) return { kind: 'foreign_owner', owner: foreign };
  if (record.fingerprint !== digest) return { kind: 'mismatch' };
  if (record.response) {
    return { kind: 'replay', response: replayOf(record.response) };
  }
  return { kind: 'in_progress', retryAfterMs: record.expiresAt - now };
}

function ownCopyOf(response: EncodedResponse): StoredResponse {
  return decodeStoredResponse(copyOf(response));
}

/** A record's bytes as `maxBytes` counts them. */
export function recordBytes(record: MemoryRecord): number {
  return (
    ENTRY_OVERHEAD_BYTES +
    textBytes(record.identity) +
    textBytes(record.fingerprint) +
    textBytes(record.ownerToken) +
    textBytes(record.owner ?? '') +
    (record.response ? encodedResponseBytes(record.response) : 0)
  );
}

/** Stored bytes never alias the caller's buffers, in either direction. */
export function copyOf(encoded: EncodedResponse): EncodedResponse {
  return {
    status: encoded.status,
    headers: encoded.headers,
    bodyKind: encoded.bodyKind,
    body: encoded.body && new Uint8Array(encoded.body),
  };
}
