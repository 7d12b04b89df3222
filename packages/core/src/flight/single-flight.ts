import type { OncelyOutcome } from '../events/oncely-event.js';
import { OncelyEventDispatcher, type OncelyEventDraft } from '../events/oncely-event-dispatcher.js';
import { ForeignOwnerError } from '../errors/foreign-owner.error.js';
import { isOwnService } from '../errors/own-service.js';
import { FlightBusyError } from './flight-busy.error.js';
import { flightErrorOutcome } from './flight-error.outcome.js';
import {
  CoordinatorUnavailableError,
  type AcquireOutcome,
  type FlightCoordinator,
} from './flight-coordinator.port.js';
import type { FlightResult, FlightRunOptions, FlightWork } from './flight.types.js';
import { FlightLeader } from './flight-leader.js';
import { FlightOutcomes } from './flight-outcomes.js';
import { heldResultOf } from './held-results.js';
import { Leadership, mayRunAgain, type Landing } from './local-flight.js';
import { LocalFlights } from './local-flights.js';
import { joinsUnderReject, peeksBeforeRun } from './executor-flight-marks.js';
import { NoticeSubscription } from './notice-subscription.js';
import { ResultCodec } from './result-codec.js';
import { uncoordinatedContext } from './uncoordinated-context.js';
import {
  resolveEngineOptions,
  resolveFlightOptions,
  serviceOfToken,
  type ResolvedEngineOptions,
  type ResolvedFlightOptions,
  type SingleFlightOptions,
} from './single-flight-options.js';

/**
 * Runs a piece of work once per key across every process sharing the coordinator, and hands its
 * result to every concurrent caller.
 *
 * Per key: a caller first joins a flight already running in this process (`joined`, no
 * coordinator call), under the rules of a follower on another node: with `onBusy: 'wait'` it gives
 * up with `FlightBusyError` after its own `wait`, and after a transient failure exactly one joiner
 * runs its own work as the next leader while the others join that run; with `onBusy: 'reject'`
 * it is refused at once while that flight runs the work or waits for a lease held elsewhere, and
 * shares only what the flight reads from the coordinator. Otherwise it asks the
 * coordinator, once: a cached result is returned (`cached`), a cached deterministic error is
 * thrown again, a free lease makes it the leader, and a held lease makes it a follower. A lease,
 * a result or an error of another `service` is refused with `ForeignOwnerError` (unless `shared`). The
 * leader runs the work (`executed`) while a watchdog renews the lease, then completes the flight
 * in one call. A follower waits for the leader's completion notice, with a backoff poll bounded
 * by the lease's remaining time as a fallback, and re-acquires: the result another caller
 * produced is `shared`; a lease freed by a transient failure or expiry makes exactly one follower
 * the next leader. A follower listens for the notice before each re-acquire, so none is missed
 * between that call's answer and the wait; its first acquire is not preceded by a subscription (a
 * cache hit must stay one call), and a notice falling between that first answer and the
 * subscription costs one short poll.
 *
 * A caller with `neverLead` (an HTTP `HEAD`, which must not keep what its `GET` replays) joins,
 * follows and reads the cache like any other, but where it would lead it releases the lease at
 * once and runs its work uncoordinated (`executed`): nothing is stored, no flight registered for
 * others to join, and after a failure it is never the one that runs the work again for the
 * others. It costs two coordinator calls
 * (`acquire`, `release`) then.
 *
 * Work that throws `MaxDurationExceededError` (its caller bounds it with a `HandlerDeadline`) has
 * not failed transiently: the flight is completed with the expiry, kept `handoffTtl`, so that the
 * callers waiting for it (here or on other nodes) get the same error instead of running the work
 * again. A caller that arrives afterwards was not waiting for it: it waits out that `handoffTtl`
 * and may then lead.
 *
 * Every stored outcome is kept at least `handoffTtl` (default 1 s), also with `resultTtl` or
 * `errorTtl` 0: that is how the followers waiting when the leader completes get its result
 * rather than running the work again. A caller arriving within that window gets it as `cached`.
 *
 * Coordinator calls: a cache hit costs one (`acquire`), or none when the coordinator holds the
 * result in this process (`peek`, e.g. Redis' near cache); a leader two (`acquire`, `complete`)
 * plus one `renew` per third of the lease TTL the work outlasts; a follower woken by the
 * notice one more `acquire`.
 *
 * Events (to `events` listeners): one per `run`, whose outcome is the caller's source
 * (`executed`, `joined`, `shared`, `cached`) or, on failure, `conflict` (`FlightBusyError`),
 * `lease_lost` (`LeaseLostError`), `coordinator_down` (`CoordinatorUnavailableError` with
 * `onCoordinatorDown: 'closed'`) or `failed` (anything else, including a shared deterministic
 * error). An extra `coordinator_down` event reports each coordinator failure the flight
 * survives: running uncoordinated, or a failed `renew`/`complete`/`release`. An `executed` event
 * carrying `error` means the result could not be stored (e.g. `ResultTooLargeError`).
 */
export class SingleFlight {
  readonly #options: ResolvedEngineOptions;
  readonly #events: OncelyEventDispatcher;
  readonly #outcomes: FlightOutcomes;
  readonly #flights = new LocalFlights();
  readonly #leader: FlightLeader;

  constructor(
    private readonly coordinator: FlightCoordinator,
    options: SingleFlightOptions = {},
  ) {
    this.#options = resolveEngineOptions(options);
    this.#events = new OncelyEventDispatcher(this.#options.listeners);
    this.#outcomes = new FlightOutcomes(
      new ResultCodec(this.#options.maxResultBytes),
      this.#options.handoffTtl,
      this.#options.service,
    );
    this.#leader = new FlightLeader(coordinator, this.#outcomes, (key, operation, error) =>
      this.#coordinatorDown(key, operation, error),
    );
  }

  /** Keys with a flight running in this process. */
  get inFlight(): number {
    return this.#flights.size;
  }

  /**
   * Whether this process's flight on `key`, if it leads one, still holds its lease, asked of the
   * coordinator now: `false` once an operator freed it under the running work.
   */
  holdsLease(key: string): Promise<boolean> {
    return this.#flights.holdsLease(key);
  }

  /**
   * Runs `work` for `key` unless another caller already does, and resolves with its result and
   * how it was obtained. A caller joining a flight of this process shares that flight's outcome,
   * governed by the options of the caller that started it, except for its own `wait` and
   * `onBusy`; its own `work` runs only if it takes over after a transient failure.
   *
   * Throws `FlightBusyError` when another caller holds the flight and this one may not wait
   * (`onBusy: 'reject'`) or waited `wait` ms; the error of a deterministic failure (the leader's
   * own error for its caller, a `SharedFlightError` by default for the others); a transient
   * failure of its own work; `LeaseLostError` when it led but lost the lease before completing
   * (nothing is stored then); `CoordinatorUnavailableError` with `onCoordinatorDown: 'closed'`;
   * `InvalidFlightOptionError` for a bad option.
   */
  async run<T>(
    key: string,
    work: FlightWork<T>,
    options?: FlightRunOptions,
  ): Promise<FlightResult<T>> {
    if (peeksBeforeRun(this)) {
      const held = this.peek<T>(key, options);
      if (held !== undefined) return held;
    }
    const startedAt = performance.now();
    const operation = options?.operation;
    const settings = options
      ? resolveFlightOptions(options, this.#options.flight)
      : this.#options.flight;
    const deadline = startedAt + settings.wait;
    const neverLead = options?.neverLead === true;
    let joined = false;
    try {
      for (;;) {
        const running = this.#flights.get(key);
        if (running === undefined) {
          // A joiner taking over waits only what is left of its own `wait`.
          const wait = Math.max(0, Math.floor(deadline - performance.now()));
          const leadership = new Leadership();
          const flight = this.#fly(
            key,
            work,
            joined ? { ...settings, wait } : settings,
            { operation, shared: options?.shared === true, retry: joined, neverLead },
            leadership,
          );
          // A caller that never leads runs nothing others may join.
          if (!neverLead) this.#flights.track(key, flight, settings, leadership);
          const landing = await flight;
          this.#emit(key, operation, landing.source, startedAt, landing.storeError);
          return { value: landing.value, source: landing.source };
        }
        const outcome = await this.#flights.join(
          running,
          key,
          settings,
          deadline,
          joinsUnderReject(this),
        );
        if ('freed' in outcome) {
          this.#flights.forget(key, running);
          continue;
        }
        joined = true;
        if ('landed' in outcome) {
          this.#emit(key, operation, 'joined', startedAt, undefined);
          return { value: outcome.landed.value as T, source: 'joined' };
        }
        if (!mayRunAgain(running, outcome.failed, settings)) throw outcome.failed;
      }
    } catch (error) {
      this.#emit(key, operation, flightErrorOutcome(error), startedAt, error);
      throw error;
    }
  }

  /**
   * The result the coordinator already holds for `key` in this process (`FlightCoordinator.peek`),
   * as `run` would return it (`cached`), answered at once with no owner token, lease or round
   * trip; `undefined` when `run` must decide: nothing held, a held error, a flight of this
   * process on the key (to be joined), or a result of another service (to be refused). `run`
   * asks it first. Emits the `cached` event as `run` does; throws, and reports, what `run` would
   * for a result that does not decode.
   */
  peek<T>(
    key: string,
    options?: Pick<FlightRunOptions, 'operation' | 'shared'>,
  ): FlightResult<T> | undefined {
    if (this.#flights.get(key) !== undefined) return undefined;
    const held = this.coordinator.peek?.(key);
    if (held?.kind !== 'cached') return undefined;
    const shared = options?.shared === true;
    if (this.#isForeign(this.#outcomes.ownerOf(held.payload), shared)) return undefined;
    const startedAt = performance.now();
    let value: T;
    try {
      value = heldResultOf(this, held, this.#outcomes) as T;
    } catch (error) {
      this.#emit(key, options?.operation, flightErrorOutcome(error), startedAt, error);
      throw error;
    }
    this.#emit(key, options?.operation, 'cached', startedAt, undefined);
    return { value, source: 'cached' };
  }

  async #fly<T>(
    key: string,
    work: FlightWork<T>,
    settings: ResolvedFlightOptions,
    {
      operation,
      shared,
      retry,
      neverLead,
    }: { operation: string | undefined; shared: boolean; retry: boolean; neverLead: boolean },
    leadership: Leadership,
  ): Promise<Landing<T>> {
    const owner = this.#options.ownerId();
    const deadline = performance.now() + settings.wait;
    const handoffEnd = performance.now() + this.#options.handoffTtl + this.#options.backoffMax;
    let attempts = 0;
    /** Whether this caller waited on a lease: then an expiry it finds is the one it waited on. */
    let waited = false;
    let subscription: NoticeSubscription | undefined;
    try {
      for (;;) {
        let outcome: AcquireOutcome;
        // A lease granted by this acquire runs from no earlier than now, as far as we can tell.
        const askedAt = performance.now();
        try {
          outcome = await this.coordinator.acquire(key, owner, settings.leaseTtl);
        } catch (error) {
          leadership.markAnswered();
          if (
            !(error instanceof CoordinatorUnavailableError) ||
            settings.onCoordinatorDown === 'closed'
          ) {
            throw error;
          }
          this.#coordinatorDown(key, operation, error);
          return { value: await work(uncoordinatedContext(key)), source: 'executed' };
        }
        leadership.heldElsewhereUntil =
          outcome.kind === 'busy' ? askedAt + Math.max(0, outcome.leaseRemainingMs) : undefined;
        leadership.markAnswered();
        if (outcome.kind !== 'busy') {
          subscription?.cancel();
          subscription = undefined;
        }
        switch (outcome.kind) {
          case 'cached':
            this.#refuseForeign(key, this.#outcomes.ownerOf(outcome.payload), shared);
            return {
              value: this.#outcomes.readResult(outcome.payload) as T,
              source: attempts > 0 ? 'shared' : 'cached',
            };
          case 'failed': {
            this.#refuseForeign(key, this.#outcomes.ownerOf(outcome.payload), shared);
            const { error, handedOff } = this.#outcomes.readFailure(
              outcome.payload,
              key,
              settings.failurePolicy,
            );
            // A new request, not a waiter of the expired or failed run: it may lead once that
            // outcome is gone, which takes `handoffTtl`, whatever its `onBusy` and `wait`.
            const handoffLeft = handoffEnd - performance.now();
            if (!handedOff || waited || handoffLeft <= 0) throw error;
            await sleep(Math.max(1, Math.min(this.#backoff(attempts), handoffLeft)));
            attempts += 1;
            continue;
          }
          case 'leader':
            if (neverLead) {
              // Nothing of its run may be kept: the lease goes back before the work starts.
              await this.#leader.settle(key, owner, undefined, operation);
              return { value: await work(uncoordinatedContext(key)), source: 'executed' };
            }
            return await this.#leader.lead(
              key,
              owner,
              outcome.fence,
              askedAt,
              work,
              settings,
              operation,
              leadership,
              // A lease found busy and then free was left by a run that failed or vanished.
              retry || waited,
            );
          case 'busy': {
            this.#refuseForeign(key, serviceOfToken(outcome.holder), shared);
            waited = true;
            const remaining = deadline - performance.now();
            const leaseRemaining = Math.max(0, outcome.leaseRemainingMs);
            if (settings.onBusy === 'reject' || remaining <= 0) {
              throw new FlightBusyError(key, leaseRemaining);
            }
            // Waking when the lease runs out lets a follower take over from a crashed leader.
            // A lease reported without time left is polled at the backoff pace, not in a spin.
            const leaseBound = leaseRemaining > 0 ? leaseRemaining : Number.POSITIVE_INFINITY;
            const delay = Math.min(this.#backoff(attempts), leaseBound, remaining);
            attempts += 1;
            subscription ??= new NoticeSubscription(this.coordinator, key, remaining);
            await subscription.until(Math.max(1, delay));
            subscription.cancel();
            // The next acquire may find the lease taken again: be listening before it answers.
            subscription = new NoticeSubscription(
              this.coordinator,
              key,
              Math.max(1, deadline - performance.now()),
            );
          }
        }
      }
    } finally {
      subscription?.cancel();
    }
  }

  /** Exponential backoff with "equal jitter": never below half the step, so polls stay spaced. */
  #backoff(attempt: number): number {
    const step = Math.min(this.#options.backoffMax, this.#options.backoffInitial * 2 ** attempt);
    return step / 2 + (Math.random() * step) / 2;
  }

  #coordinatorDown(key: string, operation: string | undefined, error: unknown): void {
    this.#events.emit({
      mechanism: 'single-flight',
      outcome: 'coordinator_down',
      operation,
      key,
      error,
    });
  }

  #emit(
    key: string,
    operation: string | undefined,
    outcome: OncelyOutcome,
    startedAt: number,
    error: unknown,
  ): void {
    if (!this.#events.active) return;
    const event: OncelyEventDraft = {
      mechanism: 'single-flight',
      outcome,
      operation,
      key,
      durationMs: performance.now() - startedAt,
    };
    if (error !== undefined) event.error = error;
    if (error instanceof ForeignOwnerError) {
      ({ owner: event.owner, foreignOwner: event.foreignOwner } = error);
    }
    this.#events.emit(event);
  }

  /**
   * A lease of another service is no flight to wait for, and a result or error it kept is no
   * answer to give: neither is this service's. `owner` is that service, when it is named.
   */
  #refuseForeign(key: string, owner: string | undefined, shared: boolean): void {
    if (this.#isForeign(owner, shared)) {
      throw new ForeignOwnerError(key, this.#options.service!, owner!);
    }
  }

  #isForeign(owner: string | undefined, shared: boolean): boolean {
    const { service, serviceAliases } = this.#options;
    if (service === undefined || shared || owner === undefined) return false;
    return !isOwnService(owner, service, serviceAliases);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
