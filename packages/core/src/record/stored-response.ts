/**
 * A response as kept by a durable idempotency record, replayed byte for byte on a retry.
 * Header names are lower-case; only headers chosen for replay are stored.
 */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: StoredBody;
}

export type StoredBody =
  | { readonly kind: 'empty' }
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'bytes'; readonly value: Uint8Array };
