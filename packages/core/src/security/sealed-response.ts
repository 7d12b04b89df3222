import { decodeStoredResponse, encodeStoredResponse } from '../record/stored-response.codec.js';
import type { StoredBody, StoredResponse } from '../record/stored-response.js';
import { EncryptionKeyring } from './encryption-keyring.js';
import { SealedDataError } from './sealed-data.error.js';

/**
 * A response as an encrypting store hands it to the store underneath: the status in clear (stores
 * and operators need it), no headers, and headers plus body sealed into one bytes body bound to
 * the record's identity and status, so it cannot be replayed under another key or status.
 */
export function sealResponse(
  keyring: EncryptionKeyring,
  identity: string,
  response: StoredResponse,
): StoredResponse {
  const encoded = encodeStoredResponse(response);
  const meta = Buffer.from(JSON.stringify([encoded.headers, encoded.bodyKind]), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(meta.length);
  const plaintext = Buffer.concat([length, meta, encoded.body ?? new Uint8Array(0)]);
  return {
    status: response.status,
    headers: {},
    body: { kind: 'bytes', value: keyring.seal(plaintext, contextOf(identity, response.status)) },
  };
}

/** Whether `response` is in the sealed form `sealResponse` produces. */
export function isSealedResponse(response: StoredResponse): boolean {
  return (
    response.body.kind === 'bytes' &&
    Object.keys(response.headers).length === 0 &&
    EncryptionKeyring.isSealed(response.body.value)
  );
}

/**
 * The response `sealResponse` sealed. An unsealed one is refused as `not_sealed` (someone wrote
 * the record around the encryption) unless `acceptUnsealed` lets records kept before encryption
 * was turned on still replay.
 */
export function openResponse(
  keyring: EncryptionKeyring,
  identity: string,
  response: StoredResponse,
  acceptUnsealed = false,
): StoredResponse {
  if (!isSealedResponse(response)) {
    if (acceptUnsealed) return response;
    throw new SealedDataError('not_sealed', undefined);
  }
  const plaintext = keyring.open(
    (response.body as Extract<StoredBody, { kind: 'bytes' }>).value,
    contextOf(identity, response.status),
  );
  try {
    const metaLength = plaintext.readUInt32BE(0);
    const [headers, bodyKind] = JSON.parse(
      plaintext.subarray(4, 4 + metaLength).toString('utf8'),
    ) as [string, StoredBody['kind']];
    return decodeStoredResponse({
      status: response.status,
      headers,
      bodyKind,
      body: plaintext.subarray(4 + metaLength),
    });
  } catch {
    // Authenticated yet unreadable: sealed by an incompatible version.
    throw new SealedDataError('malformed', undefined);
  }
}

function contextOf(identity: string, status: number): string {
  return `oncely:record:v1:${identity}:${status}`;
}
