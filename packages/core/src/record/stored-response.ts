/**
 * A response as kept by a durable idempotency record, replayed byte for byte on a retry.
 * Header names are lower-case; only headers chosen for replay are stored.
 */
export interface StoredResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** The replayed headers by lower-case name. */
  readonly headers: Readonly<Record<string, string>>;
  /** The whole body. */
  readonly body: StoredBody;
}

/** A kept body: a JSON value readable in the record, or the bytes sent, or nothing. */
export type StoredBody =
  | {
      /** No body. */
      readonly kind: 'empty';
    }
  | {
      /** A JSON value, kept as such only when serialising it again gives the bytes sent. */
      readonly kind: 'json';
      /** The value. */
      readonly value: unknown;
    }
  | {
      /** Any other body: bytes a handler returned or wrote, or JSON text kept as sent. */
      readonly kind: 'bytes';
      /** The bytes, exactly as sent. */
      readonly value: Uint8Array;
    };
