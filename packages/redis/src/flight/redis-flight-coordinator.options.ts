/** Options of `RedisFlightCoordinator`. */
export interface RedisFlightCoordinatorOptions {
  /**
   * Prefix of every key and of the notice channel; default `oncely:`. Must not contain braces
   * (they would become the cluster hash tag). Coordinators share flights only if their prefixes
   * are equal.
   */
  readonly keyPrefix?: string;
  /**
   * Longest wait, in ms, for one Redis round trip (including a connection attempt in progress)
   * before the call fails with `CoordinatorUnavailableError`; default 1000.
   */
  readonly commandTimeout?: number;
}
