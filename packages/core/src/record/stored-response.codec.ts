import { textBytes } from '../memory/held-bytes.js';
import type { StoredBody, StoredResponse } from './stored-response.js';
import { UnstorableResponseError } from './unstorable-response.error.js';

/**
 * A `StoredResponse` in the columns or fields a durable store keeps. JSON bodies are kept as the
 * exact UTF-8 text `JSON.stringify` produced (never a database JSON type, which would reorder
 * keys or renormalise numbers), so a replay is byte for byte what the first response sent.
 */
export interface EncodedResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** JSON object text; header order is kept. */
  readonly headers: string;
  /** How `body` is read back: nothing, JSON text or raw bytes. */
  readonly bodyKind: StoredBody['kind'];
  /** `null` for an empty body. */
  readonly body: Uint8Array | null;
}

/** Bytes an encoded response holds: its body as stored, and its headers' text. */
export function encodedResponseBytes(encoded: EncodedResponse): number {
  return (encoded.body?.byteLength ?? 0) + textBytes(encoded.headers);
}

const bodyKinds: ReadonlySet<string> = new Set<StoredBody['kind']>(['empty', 'json', 'bytes']);

export function encodeStoredResponse(response: StoredResponse): EncodedResponse {
  if (!Number.isInteger(response.status) || response.status < 100 || response.status > 999) {
    throw new UnstorableResponseError(`status ${String(response.status)} is not an HTTP status`);
  }
  return {
    status: response.status,
    headers: JSON.stringify(response.headers),
    bodyKind: response.body.kind,
    body: encodeBody(response.body),
  };
}

function encodeBody(body: StoredBody): Uint8Array | null {
  switch (body.kind) {
    case 'empty':
      return null;
    case 'bytes':
      return body.value;
    case 'json': {
      let text: string | undefined;
      try {
        text = JSON.stringify(body.value);
      } catch (error) {
        throw new UnstorableResponseError('the JSON body cannot be serialised', { cause: error });
      }
      if (text === undefined) {
        throw new UnstorableResponseError('the JSON body is undefined, a function or a symbol');
      }
      return Buffer.from(text, 'utf8');
    }
  }
}

/**
 * Rebuilds the response. A bytes body comes back as a plain `Uint8Array` view of `body` (no
 * copy), so pass a buffer the caller may keep.
 */
export function decodeStoredResponse(encoded: EncodedResponse): StoredResponse {
  return {
    status: encoded.status,
    headers: JSON.parse(encoded.headers) as Record<string, string>,
    body: decodeBody(encoded.bodyKind, encoded.body),
  };
}

const sharedReplays = new WeakMap<EncodedResponse, StoredResponse>();

/**
 * What `peekReplay` answers for a record a store holds as one `EncodedResponse` object for its
 * whole life: decoded on the first peek, then the same object for every later one, so a replay
 * parses nothing. It views the record's bytes; that is safe because what `peekReplay` answers
 * is only read (the app's outer layers get a copy of their own, `replayedBodyValue`).
 */
export function sharedReplayOf(encoded: EncodedResponse): StoredResponse {
  let replay = sharedReplays.get(encoded);
  if (replay === undefined) {
    replay = decodeStoredResponse(encoded);
    sharedReplays.set(encoded, replay);
  }
  return replay;
}

function decodeBody(kind: string, body: Uint8Array | null): StoredBody {
  if (!bodyKinds.has(kind)) {
    throw new Error(
      `Stored body kind "${kind}" is unknown to this version of oncely; a newer version wrote the record. Upgrade every service sharing the record store.`,
    );
  }
  const bytes = body ?? new Uint8Array(0);
  switch (kind as StoredBody['kind']) {
    case 'empty':
      return { kind: 'empty' };
    case 'json':
      return { kind: 'json', value: JSON.parse(asBuffer(bytes).toString('utf8')) };
    case 'bytes':
      return {
        kind: 'bytes',
        value: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      };
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
