import type { KeySpec } from '../key/key.types.js';

/** How a route treats the client's `Idempotency-Key` header. */
export type IdempotencyKeyMode = 'required' | 'optional' | 'ignored';

/** A key spec as a route declares it; the namespace comes from the module (or middleware) options. */
export type RouteKeySpec = Omit<KeySpec, 'namespace'> & {
  /** Who owns the key space, when the route's differs from the module's. */
  readonly namespace?: string;
};

/** Options both mechanisms share. Durations are milliseconds. */
interface CommonRouteOptions {
  /**
   * What the operation does, for the people reviewing the service's claims: one line, at most
   * 300 characters. `oncely registry export` writes it next to the claim; it never enters a key.
   */
  readonly description?: string;
  /**
   * One operation, one route: a second route claiming the same `namespace:operation:version`
   * fails the boot, naming both, unless every route claiming it is marked `shared: true` (for
   * example a v1 and a v2 path of the same command, which then replay each other's responses).
   */
  readonly shared?: boolean;
  /** Largest response body kept for replays (bytes, as stored). */
  readonly maxResponseBytes?: number;
  /**
   * Status for a request whose key needs `user.*` and has no principal: 400 names the missing
   * field (the default), 401 says "authenticate first".
   */
  readonly missingUserStatus?: 400 | 401;
  /** Headers replayed besides the safe default set (`content-type`, `location`, `etag`, …). */
  readonly replayHeaders?: readonly string[];
  /**
   * Longest time the handler may hold the key (ms; default 300 000, at most 2 147 483 647). Past
   * it the handler's abort signal fires, the lease is released, its caller and waiters get `503`
   * lease-lost with `Retry-After`, a retry may run, and nothing the handler does later is kept.
   * The abort is cooperative: a handler ignoring its signal keeps running, which is why the
   * default is long.
   */
  readonly maxDuration?: number;
}

/** `@IdempotentKey(options)` / `idempotent(options)`: durable idempotency for one route. */
export interface IdempotentRouteOptions extends RouteKeySpec, CommonRouteOptions {
  /** Default `'required'`: the client's key joins the identity, combined with the scope. */
  readonly idempotencyKey?: IdempotencyKeyMode;
  /** Header carrying the client's key; default from the module (`idempotency-key`). */
  readonly header?: string;
  /** Run the handler's writes and the record's completion in one database transaction. */
  readonly transactional?: boolean;
  /** A duplicate arriving while the first is in flight: 409 at once (default), or wait and replay. */
  readonly onBusy?: 'reject' | 'wait';
  /** With `onBusy: 'wait'`: how long to wait before answering 409. */
  readonly wait?: number;
  /** How long the record is held while the handler runs; renewed while it runs. */
  readonly leaseTtl?: number;
  /** How long a completed record is kept and replayed. */
  readonly retention?: number;
  /**
   * Versions this route had before its `version` was bumped, newest first (`['v1']`): a request
   * finding no record under the current version is answered by its live record under one of
   * these (the same identity but for the version): replayed when completed with the same
   * payload, `409` while in flight, `422` for another payload, so a retry that spans the deploy
   * does not run again. Each one is one more record read on a miss: remove it once the last
   * record written under it has expired (`maxDuration` + `retention` after the last node running
   * it stopped). docs/migration.md has the steps and the rolling-deploy caveat.
   */
  readonly previousVersions?: readonly string[];
  /**
   * How long replays are served from the coordinator's result cache before the database. Unused
   * where the record store answers at cache speed (Redis) and the route refuses in-flight
   * duplicates: replays then come from the record itself.
   */
  readonly replayCacheTtl?: number;
}

/** `@SingleFlight(options)` / `singleFlight(options)`: coalesce concurrent duplicates. */
export interface SingleFlightRouteOptions extends RouteKeySpec, CommonRouteOptions {
  /** How long the flight's lease lasts; renewed while the handler runs. */
  readonly leaseTtl?: number;
  /** How long the response stays cached after the flight; 0 = only concurrent callers share it. */
  readonly resultTtl?: number;
  /** How long a deterministic 4xx stays cached. */
  readonly errorTtl?: number;
  /** How long a concurrent caller waits for the leader's response before answering 409. */
  readonly wait?: number;
  /** A concurrent duplicate: wait for the leader's response (default), or 409 at once. */
  readonly onBusy?: 'reject' | 'wait';
  /** Coordinator unreachable: run uncoordinated (`open`, the default) or answer 503 (`closed`). */
  readonly onCoordinatorDown?: 'open' | 'closed';
}

/** Module-wide (or middleware-wide) defaults. Durations are milliseconds. */
export interface ProtectionDefaults {
  /** Who owns the key space: each route's key starts with it unless the route names its own. */
  readonly namespace: string;
  /** Header carrying the client's idempotency key (`idempotency-key`). */
  readonly header: string;
  /** Fingerprint length of routes that do not set their own (128 bits when left out). */
  readonly fingerprintBits?: number;
  /** Default `leaseTtl` of both mechanisms (30 s). */
  readonly leaseTtl: number;
  /** Default `wait` of both mechanisms (10 s). */
  readonly wait: number;
  /** Default `retention` of idempotent routes (24 h). */
  readonly retention: number;
  /** Default `replayCacheTtl` of idempotent routes (60 s). */
  readonly replayCacheTtl: number;
  /** Default `resultTtl` of SingleFlight routes (30 s). */
  readonly resultTtl: number;
  /** Default `errorTtl` of SingleFlight routes (3 s). */
  readonly errorTtl: number;
  /** Default `maxResponseBytes` (1 MiB). */
  readonly maxResponseBytes: number;
  /** Default `missingUserStatus` (400). */
  readonly missingUserStatus: 400 | 401;
  /** Default `onCoordinatorDown` of SingleFlight routes (`open`). */
  readonly onCoordinatorDown: 'open' | 'closed';
  /** Headers every route replays besides the safe default set. */
  readonly replayHeaders: readonly string[];
  /** Default `maxDuration` (5 minutes). */
  readonly maxDuration: number;
}

/** The defaults a route gets when neither it nor the module options set a value. */
export const DEFAULT_PROTECTION: Omit<ProtectionDefaults, 'namespace'> = {
  header: 'idempotency-key',
  leaseTtl: 30_000,
  wait: 10_000,
  retention: 24 * 60 * 60 * 1000,
  replayCacheTtl: 60_000,
  resultTtl: 30_000,
  errorTtl: 3_000,
  maxResponseBytes: 1024 * 1024,
  missingUserStatus: 400,
  onCoordinatorDown: 'open',
  replayHeaders: [],
  // Long: a handler ignoring its abort signal keeps running past it, and its retry may run too.
  maxDuration: 300_000,
};
