import type { StoredBody } from '../record/stored-response.js';

/**
 * A response as the framework adapters hand it to oncely and get it back. Header names are
 * lower-case. For the leader, `headers` are all the headers it set; for a replay, only those the
 * replay header policy kept.
 */
export interface HttpResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** Header values by lower-case name; a repeated header is joined as Node joins it. */
  readonly headers: Readonly<Record<string, string>>;
  /** The whole body, as it is kept for replays. */
  readonly body: StoredBody;
}

/** Size of a body as kept by a record or a result cache, for the configured limits. */
export function storedBodySize(body: StoredBody): number {
  switch (body.kind) {
    case 'empty':
      return 0;
    case 'bytes':
      return body.value.byteLength;
    case 'json':
      return Buffer.byteLength(JSON.stringify(body.value) ?? '', 'utf8');
  }
}

/**
 * A kept body as the value it stands for: `undefined` when empty, a `Buffer` for bytes, the value
 * itself for JSON. What a replayed handler returns, and, but for JSON, what goes on the wire.
 */
export function storedBodyValue(body: Exclude<StoredBody, { kind: 'json' }>): Buffer | undefined;
export function storedBodyValue(body: StoredBody): unknown;
export function storedBodyValue(body: StoredBody): unknown {
  switch (body.kind) {
    case 'empty':
      return undefined;
    case 'bytes':
      return Buffer.isBuffer(body.value) ? body.value : Buffer.from(body.value);
    case 'json':
      return body.value;
  }
}
