import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type { FlightCoordinator } from '../flight/flight-coordinator.port.js';
import {
  guardFlightKey,
  isFlightLeaseAdmin,
  type FlightLeaseAdmin,
} from '../flight/flight-lease-admin.port.js';
import {
  isFlightInspectionAdmin,
  type FlightEntry,
  type FlightInspection,
  type FlightInspectionAdmin,
} from '../flight/flight-inspection-admin.port.js';
import type { IdempotencyRecordStore } from '../record/idempotency-record-store.port.js';
import {
  isIdempotencyRecordListing,
  type IdempotencyRecordListing,
  type RecordSummary,
} from '../record/idempotency-record-listing.port.js';
import { isSealedResponse, openResponse } from './sealed-response.js';
import { EncryptionKeyring, type EncryptionOptions } from './encryption-keyring.js';
import {
  isIdempotencyRecordAdmin,
  type ForceReleaseOutcome,
  type IdempotencyRecordAdmin,
  type RecordInspection,
} from '../record/idempotency-record-admin.port.js';

/** Options of `OncelyAdmin`. */
export interface OncelyAdminOptions {
  /** The store's admin, when it is a separate object (Redis, TypeORM). Default: the store. */
  readonly admin?: IdempotencyRecordAdmin;
  /** The keys of an encrypted store, to show its stored responses opened. */
  readonly encryption?: EncryptionOptions;
  /**
   * Required: the coordinator the app's engine uses (the one you built, or the in-memory one the
   * app created when it was given none; not an encrypting wrapper), so that `forceRelease` frees
   * its leases on the key too: the idempotency guard's, which the running handler keeps
   * renewing, and for a whole business key the SingleFlight lease. `'none'` says on purpose that
   * only the durable record is released (an operator process that cannot reach the coordinator):
   * a retry then meets the guard's `409` until the old handler ends. Left out, the admin is
   * refused, since a release that silently misses the leases looks like one that worked.
   */
  readonly coordinator: FlightCoordinator | 'none';
}

/**
 * What `forceRelease` did: the record's outcome, and the coordinator leases it freed (`guard`:
 * the idempotency guard's lease on the identity; `flight`: the SingleFlight lease on the whole
 * business key given).
 */
export type KeyReleaseOutcome = ForceReleaseOutcome & {
  /** The coordinator leases freed; empty with `coordinator: 'none'`. */
  readonly leases: ReadonlyArray<'guard' | 'flight'>;
};

/** What `purge` deleted for a key, an identity or an operation. */
export interface PurgeOutcome {
  /** Durable records deleted, whatever their state. */
  readonly records: number;
  /** Cached SingleFlight results and errors evicted; 0 with `coordinator: 'none'`. */
  readonly flights: number;
}

/** Segments of a business key; its identity has one less (no fingerprint). */
const KEY_SEGMENTS = 6;

/**
 * The operator API over one record store: inspect what a key holds, force-release a key stuck
 * in progress, purge expired records. Takes an identity (`ns:op:v:scope:target`) or a whole
 * business key as logged (its fingerprint is dropped), so an id from a log line is enough.
 */
export class OncelyAdmin {
  readonly #store: IdempotencyRecordStore;
  readonly #admin: IdempotencyRecordAdmin;
  readonly #keyring: EncryptionKeyring | undefined;
  readonly #leases: FlightLeaseAdmin | undefined;
  readonly #listing: IdempotencyRecordListing | undefined;
  readonly #flights: FlightInspectionAdmin | undefined;

  constructor(store: IdempotencyRecordStore, options: OncelyAdminOptions) {
    const coordinator = coordinatorOf(options);
    const operator = options.admin ?? store;
    if (!isIdempotencyRecordAdmin(operator)) {
      throw new OncelyConfigurationError(
        'OncelyAdmin needs a store with admin methods (inspect, forceRelease): the in-memory store, or pass { admin: new RedisIdempotencyRecordAdmin(redis) } or { admin: new TypeOrmIdempotencyRecordAdmin(dataSource) }.',
      );
    }
    this.#store = store;
    this.#admin = operator;
    this.#leases = coordinator;
    this.#listing = isIdempotencyRecordListing(operator) ? operator : undefined;
    this.#flights =
      coordinator !== undefined && isFlightInspectionAdmin(coordinator) ? coordinator : undefined;
    this.#keyring = options.encryption && new EncryptionKeyring('OncelyAdmin', options.encryption);
  }

  /**
   * What the record of a key (or identity) holds now, with an encrypted response opened when
   * the `encryption` keys are given.
   */
  async inspect(keyOrIdentity: string): Promise<RecordInspection> {
    const identity = identityOf(keyOrIdentity);
    const inspection = await this.#admin.inspect(identity);
    if (inspection.kind !== 'completed' || !this.#keyring) return inspection;
    if (!isSealedResponse(inspection.response)) return inspection;
    return { ...inspection, response: openResponse(this.#keyring, identity, inspection.response) };
  }

  /**
   * Frees every layer of a key stuck in progress, so that the next request runs at once: the
   * durable record (unless completed: it is the proof the work happened) and, given the
   * `coordinator`, the guard's lease and, for a whole business key, its SingleFlight lease. The
   * old handler can no longer confirm anything: its fenced completion is refused and its lease
   * watchdog reports the lease lost.
   */
  async forceRelease(keyOrIdentity: string): Promise<KeyReleaseOutcome> {
    const identity = identityOf(keyOrIdentity);
    const record = await this.#admin.forceRelease(identity);
    const leases: Array<'guard' | 'flight'> = [];
    if (this.#leases) {
      if (await this.#leases.forceReleaseLease(guardFlightKey(identity))) leases.push('guard');
      const wholeKey = identity !== keyOrIdentity;
      if (wholeKey && (await this.#leases.forceReleaseLease(keyOrIdentity))) leases.push('flight');
    }
    return { ...record, leases };
  }

  /** Whether a `coordinator` that can be inspected was given: `inspectFlight` and `listFlights` work. */
  get inspectsFlights(): boolean {
    return this.#flights !== undefined;
  }

  /**
   * Live records of `operation` (`ns:op:ver`, or `ns:op` for every version), never their
   * responses; on Redis a SCAN of every master.
   */
  listRecords(
    operation: string,
    options?: { readonly batchSize?: number },
  ): AsyncIterable<RecordSummary> {
    return this.#recordListing().listRecords(operationOf(operation), options);
  }

  /** What the coordinator holds for a SingleFlight business key (never the cached value). */
  inspectFlight(key: string): Promise<FlightInspection> {
    return this.#flightInspection().inspectFlight(key);
  }

  /** The SingleFlight keys of `operation` the coordinator holds a lease or outcome for. */
  listFlights(
    operation: string,
    options?: { readonly batchSize?: number },
  ): AsyncIterable<FlightEntry> {
    return this.#flightInspection().listFlights(operationOf(operation), options);
  }

  /**
   * Deletes what a key, an identity or a whole operation left behind, whatever its state, so
   * that the next request runs again: the durable records and, given an inspecting
   * `coordinator`, the cached SingleFlight results (of the whole business key given, or of every
   * key of the operation). Running leases are left to `forceRelease`.
   */
  async purge(target: string, options?: { readonly batchSize?: number }): Promise<PurgeOutcome> {
    const listing = this.#recordListing();
    if (isOperation(target)) {
      operationOf(target);
      const identities: string[] = [];
      for await (const record of listing.listRecords(target, options)) {
        identities.push(record.identity);
      }
      const keys: string[] = [];
      if (this.#flights) {
        for await (const flight of this.#flights.listFlights(target, options)) {
          if (flight.inspection.kind !== 'leading') keys.push(flight.key);
        }
      }
      return {
        records: await countDeleted(identities, (identity) => listing.deleteRecord(identity)),
        flights: await countDeleted(keys, (key) => this.#flights!.evictResult(key)),
      };
    }
    const identity = identityOf(target);
    const record = await listing.deleteRecord(identity);
    // The idempotency guard's flight caches the replay too: left alone, it would keep answering.
    const flights = this.#flights
      ? await countDeleted(
          identity !== target ? [guardFlightKey(identity), target] : [guardFlightKey(identity)],
          (key) => this.#flights!.evictResult(key),
        )
      : 0;
    return { records: record ? 1 : 0, flights };
  }

  #recordListing(): IdempotencyRecordListing {
    if (this.#listing) return this.#listing;
    throw new OncelyConfigurationError(
      'OncelyAdmin needs a store admin that lists records (listRecords, deleteRecord): the in-memory store, RedisIdempotencyRecordAdmin or TypeOrmIdempotencyRecordAdmin of this version.',
    );
  }

  #flightInspection(): FlightInspectionAdmin {
    if (this.#flights) return this.#flights;
    throw new OncelyConfigurationError(
      'OncelyAdmin needs the coordinator the app uses (InMemoryFlightCoordinator, RedisFlightCoordinator) to inspect SingleFlight keys: pass { coordinator }.',
    );
  }

  /** Deletes expired records until none is left; returns how many were deleted. */
  async purgeExpired(batchSize = 1_000): Promise<number> {
    let total = 0;
    for (;;) {
      const purged = await this.#store.purgeExpired(batchSize);
      total += purged;
      if (purged < batchSize) return total;
    }
  }
}

/**
 * The coordinator whose leases the admin frees, or `undefined` for an explicit `'none'`. Says
 * which option is missing: without it `forceRelease` would free the record and leave the leases.
 */
function coordinatorOf(options: OncelyAdminOptions | undefined): FlightLeaseAdmin | undefined {
  const coordinator = (options as Partial<OncelyAdminOptions> | undefined)?.coordinator;
  if (coordinator === 'none') return undefined;
  if (coordinator === undefined) {
    throw new OncelyConfigurationError(
      "OncelyAdmin needs the option \"coordinator\": the coordinator the app's engine uses (new OncelyAdmin(store, { coordinator })), so that forceRelease frees the leases on the key as well as its record; or coordinator: 'none' to release records only, knowing that a retry then meets the idempotency guard's 409 until the old handler ends.",
    );
  }
  if (!isFlightLeaseAdmin(coordinator)) {
    throw new OncelyConfigurationError(
      'OncelyAdmin needs a coordinator with forceReleaseLease (InMemoryFlightCoordinator, RedisFlightCoordinator): pass the coordinator you built, not a wrapper around it.',
    );
  }
  return coordinator;
}

/** Whether `target` names an operation (`ns:op` or `ns:op:ver`) rather than a key or identity. */
function isOperation(target: string): boolean {
  const segments = target.split(':').length;
  return segments === 2 || segments === 3;
}

function operationOf(operation: string): string {
  if (
    typeof operation === 'string' &&
    isOperation(operation) &&
    !operation.split(':').includes('')
  ) {
    return operation;
  }
  throw new OncelyConfigurationError(
    `OncelyAdmin needs an operation as "namespace:operation" or "namespace:operation:version", got "${String(operation)}".`,
  );
}

/** Deletions run this many at a time: enough to pipeline, few enough not to flood the store. */
const PURGE_CONCURRENCY = 32;

/** How many of `items` `remove` deleted something for. */
async function countDeleted<T>(
  items: readonly T[],
  remove: (item: T) => Promise<boolean>,
): Promise<number> {
  let deleted = 0;
  for (let start = 0; start < items.length; start += PURGE_CONCURRENCY) {
    const batch = items.slice(start, start + PURGE_CONCURRENCY);
    deleted += (await Promise.all(batch.map(remove))).filter(Boolean).length;
  }
  return deleted;
}

function identityOf(keyOrIdentity: string): string {
  if (typeof keyOrIdentity !== 'string' || keyOrIdentity === '') {
    throw new OncelyConfigurationError('OncelyAdmin needs a business key or identity string.');
  }
  const segments = keyOrIdentity.split(':');
  // Escaping keeps ':' out of every segment, so the count tells a key from an identity.
  return segments.length === KEY_SEGMENTS ? segments.slice(0, -1).join(':') : keyOrIdentity;
}
