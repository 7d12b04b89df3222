import type { OncelyEvent, OncelyEventListener, OncelyOutcome } from '../events/oncely-event.js';
import { OncelyEventDispatcher, type OncelyEventDraft } from '../events/oncely-event-dispatcher.js';
import { systemClock, type Clock } from '../flight/clock.js';
import { FlightBusyError } from '../flight/flight-busy.error.js';
import { HandlerDeadline } from '../flight/handler-deadline.js';
import type { FlightResult, FlightRunOptions, FlightWork } from '../flight/flight.types.js';
import type {
  IdempotencyRecordStore,
  RecordLease,
} from '../record/idempotency-record-store.port.js';
import { LeaseLostError } from '../record/lease-lost.error.js';
import { isTransactionalRecordStore } from '../record/transactional-idempotency-record-store.port.js';
import type { StoredResponse } from '../record/stored-response.js';
import type { CallKeys } from './call-keys.js';
import { httpCallFailurePolicy, recordGuardFailurePolicy } from './http-failure.policy.js';
import { storedBodySize, type HttpResponse } from './http-response.js';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
} from './idempotency-conflict.errors.js';
import type {
  ProtectedRoute,
  ResolvedIdempotentRoute,
  ResolvedSingleFlightRoute,
} from './protected-route.js';
import { PayloadTooLargeError } from './request-rejected.errors.js';
import { TransactionalStoreRequiredError } from './route-setup.errors.js';
import { isDeterministicClientError, isStorableStatus } from './response-storage-policy.js';
import { ResponseSignal } from './response-signal.js';
import { handlerContext } from './handler-context.js';
import { neverAborted, RecordWatchdog } from './record-watchdog.js';

/** What the executor needs of the SingleFlight engine (`SingleFlight` satisfies it). */
export interface FlightRunner {
  run<T>(key: string, work: FlightWork<T>, options?: FlightRunOptions): Promise<FlightResult<T>>;
}

export interface ProtectedCallEngines {
  /** Engine of `@SingleFlight` routes; its own listeners report single-flight events. */
  readonly flight: FlightRunner;
  /**
   * Engine of the idempotency guard in front of the record store (in-flight duplicates refused
   * at the lease, replays from the result cache). Same coordinator as `flight` is fine.
   */
  readonly guard: FlightRunner;
  /** `transactional` routes need a `TransactionalIdempotencyRecordStore` (e.g. TypeORM). */
  readonly store: IdempotencyRecordStore;
  readonly events?: readonly OncelyEventListener[];
  readonly clock?: Clock;
}

/** What a handler gets while oncely runs it. */
export interface HandlerContext {
  /**
   * Aborts when the lease (flight or record) is lost or the route's `maxDuration` is over: stop,
   * nothing will be confirmed. Cooperative: a handler that ignores it keeps running unobserved.
   */
  readonly signal: AbortSignal;
  /** The transaction of a `transactional` route (e.g. a TypeORM `EntityManager`). */
  readonly transaction?: unknown;
}

export interface ProtectedCall {
  readonly route: ProtectedRoute;
  readonly keys: CallKeys;
  /** Runs the route's handler and reports its response; throwing is a transient failure. */
  readonly handler: (context: HandlerContext) => Promise<HttpResponse>;
}

export interface ProtectedCallResult {
  /**
   * The leader's own response as its handler produced it, or, for a replay, the kept status,
   * body and replay headers plus `idempotent-replayed: true`.
   */
  readonly response: HttpResponse;
  readonly replayed: boolean;
}

export const REPLAYED_HEADER = 'idempotent-replayed';

interface LocalCall {
  /** When the handler started (or, before that, when the call did). */
  since: number;
  executing: boolean;
  /** On the record store alone: the first call's payload digest and outcome, to share. */
  recorded?: { readonly digest: string; readonly outcome: Promise<GuardedOutcome> };
}

interface GuardedOutcome {
  readonly digest: string;
  readonly response: StoredResponse;
  /** `true` when the record store replayed it (the guard's cache had expired). */
  readonly replayed: boolean;
}

const POLL_MIN_MS = 25;
const POLL_MAX_MS = 1_000;

/**
 * Runs one protected call, framework-free: the layered guard for idempotent routes (a flight on
 * the identity refuses in-flight duplicates at the coordinator's lease and serves replays from
 * its result cache, the durable record behind it stays the authority), SingleFlight for
 * coalescing routes, or both (the record outside, the flight inside). Throws the typed errors
 * `toProblemResponse` maps (409, 422, 413, 503, …); errors of the handler itself pass through.
 */
export class ProtectedCallExecutor {
  readonly #clock: Clock;
  readonly #events: OncelyEventDispatcher;
  /**
   * Calls of this process per key, for `onBusy: 'reject'` duplicates that would join locally:
   * refused only while the handler really runs, not while the first call merely reads a replay.
   */
  readonly #running = new Map<string, LocalCall>();

  constructor(private readonly engines: ProtectedCallEngines) {
    this.#clock = engines.clock ?? systemClock;
    this.#events = new OncelyEventDispatcher(engines.events ?? []);
  }

  /** Keys this process is calling, waiting for or running a handler for (diagnostics). */
  get inFlight(): number {
    return this.#running.size;
  }

  async execute(call: ProtectedCall): Promise<ProtectedCallResult> {
    const { idempotent } = call.route;
    const identity = call.keys.idempotency;
    if (!idempotent || !identity) return this.#inner(call, undefined);
    return this.#needsGuard(idempotent)
      ? this.#guarded(call, idempotent, identity)
      : this.#recorded(call, idempotent, identity);
  }

  /**
   * The guard pays for itself in front of a store slower than the coordinator (SQL), and for
   * routes that wait, which it wakes by notice instead of polling. A store that answers at cache
   * speed and already refuses in-flight duplicates gains nothing from it but two round trips.
   */
  #needsGuard(route: ResolvedIdempotentRoute): boolean {
    return this.engines.store.answersAtCacheSpeed !== true || route.onBusy !== 'reject';
  }

  /**
   * The record store alone: its `begin` is the lock, the replay and the mismatch check. Calls of
   * this process with the same identity and payload that arrive while the first is still claiming
   * the record share what it finds instead of asking the store again.
   */
  async #recorded(
    call: ProtectedCall,
    route: ResolvedIdempotentRoute,
    key: NonNullable<CallKeys['idempotency']>,
  ): Promise<ProtectedCallResult> {
    const localKey = `${key.identity}:idem`;
    const startedAt = this.#clock.now();
    this.#refuseRunningDuplicate(localKey, route, key.identity);
    const local = this.#enter(localKey);
    const first = local.call.recorded;
    if (first !== undefined && first.digest === key.digest) {
      return this.#shareRecorded(first.outcome, local.call, route, key, startedAt);
    }
    let fresh: HttpResponse | undefined;
    const outcome = this.#underRecord(call, route, key, noOuterSignal, local.call, (response) => {
      fresh = response;
    });
    local.call.recorded ??= { digest: key.digest, outcome };
    try {
      const { replayed, response } = await outcome;
      if (!replayed && fresh !== undefined) return { response: fresh, replayed: false };
      this.#emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
      return { response: replayOf(response), replayed: true };
    } catch (error) {
      // Not kept (5xx, 429, …): the record was released and the caller gets the response as is.
      if (error instanceof ResponseSignal && fresh !== undefined) {
        return { response: fresh, replayed: false };
      }
      throw error;
    } finally {
      local.leave();
    }
  }

  /** A replay is shared; a call that went on to run the handler makes this one a 409. */
  async #shareRecorded(
    first: Promise<GuardedOutcome>,
    local: LocalCall,
    route: ResolvedIdempotentRoute,
    key: NonNullable<CallKeys['idempotency']>,
    startedAt: number,
  ): Promise<ProtectedCallResult> {
    const conflict = () => {
      this.#emit('idempotency', 'conflict', route.operation, key.identity);
      return new IdempotencyConflictError(key.identity, 1);
    };
    let outcome: GuardedOutcome;
    try {
      outcome = await first;
    } catch (error) {
      throw local.executing ? conflict() : error;
    }
    if (local.executing || !outcome.replayed) throw conflict();
    this.#emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
    return { response: replayOf(outcome.response), replayed: true };
  }

  async #guarded(
    call: ProtectedCall,
    route: ResolvedIdempotentRoute,
    key: NonNullable<CallKeys['idempotency']>,
  ): Promise<ProtectedCallResult> {
    const flightKey = `${key.identity}:idem`;
    const startedAt = this.#clock.now();
    this.#refuseRunningDuplicate(flightKey, route, key.identity);
    let fresh: HttpResponse | undefined;
    const local = this.#enter(flightKey);
    const refuseJoined = () => {
      if (route.onBusy !== 'reject' || !local.call.executing) return;
      this.#emit('idempotency', 'conflict', route.operation, key.identity);
      throw new IdempotencyConflictError(key.identity, 1);
    };
    try {
      const { value, source } = await this.engines.guard.run<GuardedOutcome>(
        flightKey,
        (flight) =>
          this.#underRecord(
            call,
            route,
            key,
            () => flight.signal,
            local.call,
            (response) => {
              fresh = response;
            },
          ),
        {
          operation: route.operation,
          leaseTtl: route.leaseTtl,
          resultTtl: Math.min(route.replayCacheTtl, route.retention),
          errorTtl: 0,
          wait: route.wait,
          onBusy: route.onBusy,
          failurePolicy: recordGuardFailurePolicy,
          onCoordinatorDown: 'open',
        },
      );
      if (source === 'executed' && fresh !== undefined) {
        return { response: fresh, replayed: false };
      }
      if (source === 'joined') refuseJoined();
      if (value.digest !== key.digest) {
        this.#emit('idempotency', 'mismatch', route.operation, key.identity);
        throw new IdempotencyMismatchError(key.identity);
      }
      this.#emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
      return { response: replayOf(value.response), replayed: true };
    } catch (error) {
      if (error instanceof ResponseSignal) {
        // Not kept (5xx, 429, …): the leader answers with it; a local joiner shares it.
        if (fresh !== undefined) return { response: fresh, replayed: false };
        refuseJoined();
        return { response: replayOf(error.response), replayed: true };
      }
      if (error instanceof FlightBusyError) {
        this.#emit('idempotency', 'conflict', route.operation, key.identity);
        throw new IdempotencyConflictError(key.identity, error.leaseRemainingMs);
      }
      throw error;
    } finally {
      local.leave();
    }
  }

  /** The durable record's protocol, run by the guard's leader (or uncoordinated). */
  async #underRecord(
    call: ProtectedCall,
    route: ResolvedIdempotentRoute,
    key: NonNullable<CallKeys['idempotency']>,
    outerSignal: () => AbortSignal,
    local: LocalCall,
    onFresh: (response: HttpResponse) => void,
  ): Promise<GuardedOutcome> {
    const { store } = this.engines;
    const startedAt = this.#clock.now();
    const deadline = startedAt + (route.onBusy === 'wait' ? route.wait : 0);
    for (let attempt = 0; ; attempt++) {
      const begun = await store.begin(key.identity, key.digest, {
        leaseTtlMs: route.leaseTtl,
        retentionMs: route.retention,
      });
      switch (begun.kind) {
        case 'replay':
          return { digest: key.digest, response: begun.response, replayed: true };
        case 'mismatch':
          this.#emit('idempotency', 'mismatch', route.operation, key.identity);
          throw new IdempotencyMismatchError(key.identity);
        case 'in_progress': {
          const remaining = deadline - this.#clock.now();
          if (remaining <= 0) {
            this.#emit('idempotency', 'conflict', route.operation, key.identity);
            throw new IdempotencyConflictError(key.identity, begun.retryAfterMs);
          }
          const step = Math.min(POLL_MAX_MS, POLL_MIN_MS * 2 ** attempt);
          await delay(Math.max(1, Math.min(step, begun.retryAfterMs, remaining)));
          continue;
        }
        case 'acquired': {
          this.#markExecuting(local);
          const stored = await this.#execute(
            call,
            route,
            key,
            begun.lease,
            outerSignal,
            onFresh,
            startedAt,
          );
          return { digest: key.digest, response: stored, replayed: false };
        }
      }
    }
  }

  async #execute(
    call: ProtectedCall,
    route: ResolvedIdempotentRoute,
    key: NonNullable<CallKeys['idempotency']>,
    lease: RecordLease,
    outerSignal: () => AbortSignal,
    onFresh: (response: HttpResponse) => void,
    startedAt: number,
  ): Promise<StoredResponse> {
    const { store } = this.engines;
    const watchdog = new RecordWatchdog(
      store,
      lease,
      route.leaseTtl,
      route.maxDuration,
      outerSignal,
    );
    let settled = false;
    const produce = async (transaction: unknown): Promise<StoredResponse> => {
      // At maxDuration the call stops waiting: a transaction rolls back, nothing is completed.
      const { response } = await watchdog.bound(
        this.#inner(call, transaction, () => watchdog.signal),
      );
      onFresh(response);
      if (!isStorableStatus(response.status))
        throw ResponseSignal.unkept(shareable(response, route));
      return keep(response, route);
    };
    try {
      let stored: StoredResponse;
      if (route.transactional) {
        if (!isTransactionalRecordStore(store)) {
          throw new TransactionalStoreRequiredError(call.route.name);
        }
        stored = await store.runInTransaction(lease, async (transaction) => {
          const response = await produce(transaction);
          return { response, result: response };
        });
      } else {
        stored = await produce(undefined);
        await store.complete(lease, stored);
      }
      settled = true;
      this.#emit('idempotency', 'executed', route.operation, key.identity, startedAt);
      return stored;
    } catch (error) {
      const expired = watchdog.expired;
      if (expired !== undefined) {
        // Not a transient failure: the guard hands the expiry to its waiters, and the record is
        // freed so that a retry runs.
        settled = true;
        await store.release(lease).catch(() => undefined);
        this.#emit('idempotency', 'lease_lost', route.operation, key.identity, startedAt, expired);
        throw expired;
      }
      if (error instanceof LeaseLostError || watchdog.lost) {
        settled = true;
        this.#emit('idempotency', 'lease_lost', route.operation, key.identity, startedAt, error);
        throw error instanceof LeaseLostError
          ? error
          : new LeaseLostError(lease.identity, lease.fence, { cause: error });
      }
      throw error;
    } finally {
      watchdog.stop();
      if (!settled) {
        // A transient failure (thrown error, 5xx, …): free the record so a retry runs again.
        await store.release(lease).catch(() => undefined);
        this.#emit('idempotency', 'failed', route.operation, key.identity, startedAt);
      }
    }
  }

  /** The SingleFlight layer if the route has one, else the handler itself. */
  async #inner(
    call: ProtectedCall,
    transaction: unknown,
    signalOf: () => AbortSignal = noOuterSignal,
  ): Promise<ProtectedCallResult> {
    const route = call.route.singleFlight;
    const key = call.keys.singleFlight;
    const context = handlerContext(signalOf, transaction);
    if (!route || !key) return { response: await call.handler(context), replayed: false };
    return this.#coalesced(call, route, key.key, context);
  }

  async #coalesced(
    call: ProtectedCall,
    route: ResolvedSingleFlightRoute,
    key: string,
    context: HandlerContext,
  ): Promise<ProtectedCallResult> {
    const localLeaseMs = this.#localDuplicate(key, route);
    if (localLeaseMs !== undefined) {
      this.#emit('single-flight', 'conflict', route.operation, key);
      throw new FlightBusyError(key, localLeaseMs);
    }
    let fresh: HttpResponse | undefined;
    const local = this.#enter(key);
    const refuseJoined = () => {
      if (route.onBusy !== 'reject' || !local.call.executing) return;
      this.#emit('single-flight', 'conflict', route.operation, key);
      throw new FlightBusyError(key, 1);
    };
    try {
      const { value, source } = await this.engines.flight.run<StoredResponse>(
        key,
        async (flight) => {
          this.#markExecuting(local.call);
          const deadline = new HandlerDeadline(key, flight.fence, route.maxDuration);
          let response: HttpResponse;
          try {
            response = await deadline.bound(
              call.handler(
                handlerContext(
                  () => AbortSignal.any([context.signal, flight.signal, deadline.signal]),
                  context.transaction,
                ),
              ),
            );
          } finally {
            deadline.clear();
          }
          fresh = response;
          if (isDeterministicClientError(response.status)) {
            throw ResponseSignal.kept(keep(response, route));
          }
          if (!isStorableStatus(response.status)) {
            throw ResponseSignal.unkept(shareable(response, route));
          }
          return keep(response, route);
        },
        {
          operation: route.operation,
          leaseTtl: route.leaseTtl,
          resultTtl: route.resultTtl,
          errorTtl: route.errorTtl,
          wait: route.wait,
          onBusy: route.onBusy,
          onCoordinatorDown: route.onCoordinatorDown,
          failurePolicy: httpCallFailurePolicy,
        },
      );
      if (source === 'executed' && fresh !== undefined) return { response: fresh, replayed: false };
      if (source === 'joined') refuseJoined();
      return { response: replayOf(value), replayed: true };
    } catch (error) {
      if (error instanceof ResponseSignal) {
        if (fresh !== undefined) return { response: fresh, replayed: false };
        refuseJoined();
        return { response: replayOf(error.response), replayed: true };
      }
      throw error;
    } finally {
      local.leave();
    }
  }

  /** `#localDuplicate` for idempotent routes: a 409 while this process runs the handler. */
  #refuseRunningDuplicate(
    localKey: string,
    route: ResolvedIdempotentRoute,
    identity: string,
  ): void {
    const localLeaseMs = this.#localDuplicate(localKey, route);
    if (localLeaseMs === undefined) return;
    this.#emit('idempotency', 'conflict', route.operation, identity);
    throw new IdempotencyConflictError(identity, localLeaseMs);
  }

  /**
   * The engine lets callers of one process join a running flight whatever their `onBusy`; a
   * route that refuses duplicates in flight must refuse those too, before joining. Returns the
   * estimated time left on the running call's lease, or `undefined` to go ahead.
   */
  #localDuplicate(
    key: string,
    route: { onBusy: 'reject' | 'wait'; leaseTtl: number },
  ): number | undefined {
    if (route.onBusy !== 'reject') return undefined;
    const local = this.#running.get(key);
    if (local === undefined || !local.executing) return undefined;
    return Math.max(1, route.leaseTtl - (this.#clock.now() - local.since));
  }

  /**
   * Joins this process's call for `key`, or starts it. Callers that join before the handler runs
   * share the engine's flight: a replay for all when it only reads one, a 409 under
   * `onBusy: 'reject'` when it turns out to execute (`refuseJoined`), as a duplicate from another
   * node would get.
   */
  #enter(key: string): { readonly call: LocalCall; readonly leave: () => void } {
    const existing = this.#running.get(key);
    if (existing !== undefined) return { call: existing, leave: () => undefined };
    const call: LocalCall = { since: this.#clock.now(), executing: false };
    this.#running.set(key, call);
    return {
      call,
      leave: () => {
        if (this.#running.get(key) === call) this.#running.delete(key);
      },
    };
  }

  #markExecuting(call: LocalCall): void {
    call.executing = true;
    call.since = this.#clock.now();
  }

  #emit(
    mechanism: OncelyEvent['mechanism'],
    outcome: OncelyOutcome,
    operation: string,
    key: string,
    startedAt?: number,
    error?: unknown,
  ): void {
    if (!this.#events.active) return;
    const event: OncelyEventDraft = {
      mechanism,
      outcome,
      operation,
      key,
    };
    if (startedAt !== undefined) event.durationMs = this.#clock.now() - startedAt;
    if (error !== undefined) event.error = error;
    this.#events.emit(event);
  }
}

/** The kept form of a response: replay headers only, bytes as `Buffer`, within the size limit. */
function keep(
  response: HttpResponse,
  route: {
    maxResponseBytes: number;
    replayHeaders: { pick(h: Record<string, unknown>): Record<string, string> };
  },
): StoredResponse {
  const body =
    response.body.kind === 'bytes' && !Buffer.isBuffer(response.body.value)
      ? { kind: 'bytes' as const, value: Buffer.from(response.body.value) }
      : response.body;
  const size = storedBodySize(body);
  if (size > route.maxResponseBytes) {
    throw new PayloadTooLargeError('response', route.maxResponseBytes, size);
  }
  return { status: response.status, headers: route.replayHeaders.pick(response.headers), body };
}

/** What other callers may see of a response that is not kept: its replay headers only. */
function shareable(
  response: HttpResponse,
  route: { replayHeaders: { pick(h: Record<string, unknown>): Record<string, string> } },
): HttpResponse {
  return { ...response, headers: route.replayHeaders.pick(response.headers) };
}

function replayOf(response: StoredResponse): HttpResponse {
  const headers: Record<string, string> = { ...response.headers };
  headers[REPLAYED_HEADER] = 'true';
  return { status: response.status, headers, body: response.body };
}

const noOuterSignal = (): AbortSignal => neverAborted;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
