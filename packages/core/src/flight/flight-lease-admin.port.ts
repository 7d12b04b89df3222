/**
 * Operator access to a coordinator's leases, next to `FlightCoordinator`. Implemented by
 * `InMemoryFlightCoordinator` and `RedisFlightCoordinator` (`@oncely/redis`); use it through
 * `OncelyAdmin`.
 */
export interface FlightLeaseAdmin {
  /**
   * Frees the lease of `key` whoever holds it and wakes its waiters: the holder can no longer
   * renew, complete or release it (its owner token is gone, so its watchdog reports the lease
   * lost), and the next caller leads with a higher fence. A cached outcome is left alone.
   * Resolves `false` when no lease was held.
   */
  forceReleaseLease(key: string): Promise<boolean>;
}

/** Whether `coordinator` also offers the lease admin method. */
export function isFlightLeaseAdmin(coordinator: object): coordinator is FlightLeaseAdmin {
  return typeof (coordinator as Partial<FlightLeaseAdmin>).forceReleaseLease === 'function';
}

/** The key of the idempotency guard's flight on a record identity. */
export function guardFlightKey(identity: string): string {
  return `${identity}:idem`;
}
