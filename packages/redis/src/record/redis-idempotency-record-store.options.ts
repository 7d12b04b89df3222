/** Options of `RedisIdempotencyRecordStore`. */
export interface RedisIdempotencyRecordStoreOptions {
  /**
   * Prepended to every key, before the hash tag: a record lives at
   * `<keyPrefix>{<keyHash>}:record`. Default `oncely:`, the flight coordinator's default too (their
   * keys never collide). Must not contain braces (they would become the cluster hash tag). Give
   * each environment or service sharing one Redis its own prefix when identities could coincide.
   */
  readonly keyPrefix?: string;
}
