import type { RedisNearCacheOptions } from '../connection/near-cache-bounds.js';

/** Options of `RedisIdempotencyRecordStore`. */
export interface RedisIdempotencyRecordStoreOptions {
  /**
   * Prepended to every key: a record lives at
   * `<keyPrefix><namespace>:<operation>:<version>:{<keyHash>}:record` (see `recordKey`). Default
   * `oncely:`, the flight coordinator's default too (their keys never collide). Must not contain
   * braces (they would become the cluster hash tag). Give each environment or service sharing
   * one Redis its own prefix when identities could coincide.
   */
  readonly keyPrefix?: string;
  /**
   * Completed records this process has seen (completed itself or replayed from Redis) answer
   * later replays of the same identity, digest and an accepted owner from memory, with no round
   * trip, never after the record's key expires, and never after an operator deleted it: the
   * store subscribes to the record notices the admin (`RedisIdempotencyRecordAdmin`) publishes,
   * on one connection of its own, and serves nothing while that subscription is not confirmed
   * (everything is flushed whenever it drops or is made again, since notices can be lost).
   * Least recently used entries go beyond `maxEntries` (default 10 000) or `maxBytes` (default
   * 64 MiB: a response's body as stored, two bytes per character of its headers and names).
   * `false` turns it off: every replay reads Redis, and the store opens no subscriber
   * connection. Always off on a Redis Cluster client, whose subscriber can move to another node
   * without a signal to flush on.
   */
  readonly nearCache?: RedisNearCacheOptions | false;
}
