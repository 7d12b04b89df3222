import type { OncelyEvent, OncelyOutcome } from '../events/oncely-event.js';
import { OncelyEventDispatcher, type OncelyEventDraft } from '../events/oncely-event-dispatcher.js';
import { systemClock, type Clock } from '../time/clock.js';
import { FlightBusyError } from '../flight/flight-busy.error.js';
import { HandlerDeadline } from '../flight/handler-deadline.js';
import type { StoredResponse } from '../record/stored-response.js';
import type { CallKeys } from './call-keys.js';
import { handlerContext } from './handler-context.js';
import { httpCallFailurePolicy, recordGuardFailurePolicy } from './call-failure.policy.js';
import type { HttpResponse } from '../http/http-response.js';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
} from './idempotency-conflict.errors.js';
import { keep, replayOf, shareable, withoutReplayMark } from './kept-response.js';
import { LocalCalls, type GuardedOutcome, type LocalCall } from './local-calls.js';
import type { ResolvedIdempotentRoute, ResolvedSingleFlightRoute } from './protected-route.js';
import type {
  HandlerContext,
  ProtectedCall,
  ProtectedCallEngines,
  ProtectedCallResult,
} from './protected-call.types.js';
import { executeUnderRecord } from './record-execution.js';
import { neverAborted } from './record-watchdog.js';
import { isDeterministicClientError, isStorableStatus } from '../http/response-storage-policy.js';
import { ResponseSignal } from './response-signal.js';
import { storedBodyValue } from '../http/http-response.js';
import { storedBodyOf } from './stored-body.js';
import { VALUE_CALL_STATUS, type ValueCall, type ValueCallResult } from './value-call.js';

export { REPLAYED_HEADER } from './kept-response.js';
export type {
  FlightRunner,
  HandlerContext,
  ProtectedCall,
  ProtectedCallEngines,
  ProtectedCallResult,
} from './protected-call.types.js';

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
  readonly #local: LocalCalls;

  constructor(private readonly engines: ProtectedCallEngines) {
    this.#clock = engines.clock ?? systemClock;
    this.#events = new OncelyEventDispatcher(engines.events ?? []);
    this.#local = new LocalCalls(this.#clock);
  }

  /** Keys this process is calling, waiting for or running a handler for (diagnostics). */
  get inFlight(): number {
    return this.#local.size;
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
   * Runs a call whose handler returns a value (a message handler, a resolver, a provider method)
   * under the same protection, and hands back the value, or the kept one for a replay.
   */
  async executeValue(call: ValueCall): Promise<ValueCallResult> {
    const { route, keys, run } = call;
    const { response, replayed } = await this.execute({
      route,
      keys,
      handler: async (context) => ({
        status: VALUE_CALL_STATUS,
        headers: {},
        body: storedBodyOf(await run(context), route.name),
      }),
    });
    return { value: storedBodyValue(response.body), replayed };
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
    const local = this.#local.enter(localKey);
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
    const local = this.#local.enter(flightKey);
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
          this.#local.markExecuting(local);
          const stored = await executeUnderRecord({
            store,
            route,
            routeName: call.route.name,
            lease: begun.lease,
            outerSignal,
            run: async (transaction, signalOf) => {
              const inner = await this.#inner(call, transaction, signalOf);
              return inner.replayed ? withoutReplayMark(inner.response) : inner.response;
            },
            onFresh,
            emit: (outcome, error) =>
              this.#emit('idempotency', outcome, route.operation, key.identity, startedAt, error),
          });
          return { digest: key.digest, response: stored, replayed: false };
        }
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
    const enclosed = signalOf !== noOuterSignal;
    return this.#coalesced(call, route, key.key, context, enclosed);
  }

  async #coalesced(
    call: ProtectedCall,
    route: ResolvedSingleFlightRoute,
    key: string,
    context: HandlerContext,
    /** Whether a durable record encloses the flight: its expiry ends the flight as well. */
    enclosed: boolean,
  ): Promise<ProtectedCallResult> {
    const localLeaseMs = this.#local.duplicateLeaseMs(key, route);
    if (localLeaseMs !== undefined) {
      this.#emit('single-flight', 'conflict', route.operation, key);
      throw new FlightBusyError(key, localLeaseMs);
    }
    let fresh: HttpResponse | undefined;
    const local = this.#local.enter(key);
    const refuseJoined = () => {
      if (route.onBusy !== 'reject' || !local.call.executing) return;
      this.#emit('single-flight', 'conflict', route.operation, key);
      throw new FlightBusyError(key, 1);
    };
    try {
      const { value, source } = await this.engines.flight.run<StoredResponse>(
        key,
        async (flight) => {
          this.#local.markExecuting(local.call);
          const deadline = new HandlerDeadline(key, flight.fence, route.maxDuration);
          if (enclosed) deadline.follow(context.signal);
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

  /** `LocalCalls.duplicateLeaseMs` for idempotent routes: a 409 while this process runs the handler. */
  #refuseRunningDuplicate(
    localKey: string,
    route: ResolvedIdempotentRoute,
    identity: string,
  ): void {
    const localLeaseMs = this.#local.duplicateLeaseMs(localKey, route);
    if (localLeaseMs === undefined) return;
    this.#emit('idempotency', 'conflict', route.operation, identity);
    throw new IdempotencyConflictError(identity, localLeaseMs);
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

const noOuterSignal = (): AbortSignal => neverAborted;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
