import type { BeginOptions, BeginOutcome, StoredResponse } from '@oncely/core';
import { decodeStoredResponse, foreignOwnerOf, type EncodedResponse } from '@oncely/core/adapter';

/** A record row as `RecordStatements.select` reads it (driver types vary by dialect). */
export interface RecordRow {
  fingerprint: string;
  status: string;
  owner_token: string;
  owner: string | null;
  fence: number | string;
  expires_at: number | string;
  response_status: number | string | null;
  response_headers: string | null;
  response_body_kind: string | null;
  response_body: Uint8Array | null;
}

/**
 * What a live row answers a `begin` with `digest` at `now` under `options`' owner:
 * `foreign_owner`, `mismatch`, `replay` or `in_progress`. `undefined` once it expired (an
 * abandoned lease, or a completed record past its retention): the row then counts as absent.
 */
export function liveAnswer(
  row: RecordRow,
  digest: string,
  now: number,
  options: BeginOptions,
): BeginOutcome | undefined {
  const expiresAt = Number(row.expires_at);
  if (expiresAt <= now) return undefined;
  const foreign = foreignOwnerOf(row.owner, options);
  if (foreign !== undefined) return { kind: 'foreign_owner', owner: foreign };
  if (row.fingerprint !== digest) return { kind: 'mismatch' };
  if (row.status === 'completed') return { kind: 'replay', response: decodeRow(row) };
  return { kind: 'in_progress', retryAfterMs: expiresAt - now };
}

function decodeRow(row: RecordRow): StoredResponse {
  return decodeStoredResponse({
    status: Number(row.response_status),
    headers: row.response_headers ?? '{}',
    bodyKind: (row.response_body_kind ?? 'empty') as EncodedResponse['bodyKind'],
    body: row.response_body,
  });
}
