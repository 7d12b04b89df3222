/**
 * What a coordinator or a record store tells the start-up about its backend, for the one line
 * the start-up logs per adapter (both ports declare these members, kept apart as the ports are).
 * Both are optional: without `describe` the line names the adapter's class; without `probe` the
 * backend counts as reachable.
 */
export interface BackendReport {
  /**
   * What the adapter works on, e.g. `Redis redis://127.0.0.1:6379 (prefix oncely:)` or
   * `TypeORM postgres db.internal:5432/shop`. Never a password or any other secret: it is logged.
   */
  describe?(): string;
  /**
   * Resolves once the backend answers; rejects within `timeoutMs` when it does not (refused,
   * silent), with an error saying why. The start-up then warns once and boots anyway: an outage
   * is the routes' to handle (`onCoordinatorDown`, 503), not a reason to refuse the boot.
   */
  probe?(timeoutMs: number): Promise<void>;
}
