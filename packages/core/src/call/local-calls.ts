import type { Clock } from '../time/clock.js';
import type { StoredResponse } from '../record/stored-response.js';
import type { CallEvents } from './call-events.js';
import { IdempotencyConflictError } from './idempotency-conflict.errors.js';

/** One key's call in this process, as the callers that join it see it. */
export interface LocalCall {
  /** When the handler started (or, before that, when the call did). */
  since: number;
  executing: boolean;
  /** Settles when the handler starts (`executing` turns true); never if it does not run. */
  readonly started: Promise<void>;
  /**
   * Whether the lease the running handler holds still holds, asked of its store; set once the
   * handler runs under a lease that can be asked. An operator's force-release frees it.
   */
  confirm?: () => Promise<boolean>;
  /**
   * Time left on that lease as its watchdog last confirmed it (a renewal, or a duplicate's
   * `confirm`, extends it); set with `confirm` where the watchdog is at hand.
   */
  leaseRemainingMs?: () => number;
  /** On the record store alone: the first call's payload digest and outcome, to share. */
  recorded?: { readonly digest: string; readonly outcome: Promise<GuardedOutcome> };
}

/** What an idempotent call's record protocol ends with. */
export interface GuardedOutcome {
  readonly digest: string;
  readonly response: StoredResponse;
  /** `true` when the record store replayed it (the guard's cache had expired). */
  readonly replayed: boolean;
}

/**
 * Calls of this process per key, for `onBusy: 'reject'` duplicates that would join locally:
 * refused only while the handler really runs, not while the first call merely reads a replay.
 */
export class LocalCalls {
  readonly #running = new Map<string, LocalCall>();
  readonly #start = new WeakMap<LocalCall, () => void>();

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.#running.size;
  }

  /**
   * The engine lets callers of one process join a running flight whatever their `onBusy`; a
   * route that refuses duplicates in flight must refuse those too, before joining. Returns the
   * estimated time left on the running call's lease, or `undefined` to go ahead: also when the
   * running handler's lease turns out to have been freed (an operator's force-release), whose
   * call then no longer stands for the key in this process.
   */
  duplicateLeaseMs(
    key: string,
    route: { onBusy: 'reject' | 'wait'; leaseTtl: number },
  ): number | undefined | Promise<number | undefined> {
    if (route.onBusy !== 'reject') return undefined;
    const local = this.#running.get(key);
    if (local === undefined || !local.executing) return undefined;
    if (local.confirm === undefined) return this.leaseRemainingMs(local, route.leaseTtl);
    return local.confirm().then((held) => {
      // Read after the confirmation, which renewed the lease.
      if (held) return this.leaseRemainingMs(local, route.leaseTtl);
      if (this.#running.get(key) === local) this.#running.delete(key);
      return undefined;
    });
  }

  /**
   * Joins this process's call for `key`, or starts it. Callers that join before the handler runs
   * share the engine's flight: a replay for all when it only reads one, a 409 under
   * `onBusy: 'reject'` when it turns out to execute (`refuseJoined`), as a duplicate from another
   * node would get.
   */
  enter(key: string): { readonly call: LocalCall; readonly leave: () => void } {
    const existing = this.#running.get(key);
    if (existing !== undefined) return { call: existing, leave: () => undefined };
    const call = this.#create();
    this.#running.set(key, call);
    return {
      call,
      leave: () => {
        if (this.#running.get(key) === call) this.#running.delete(key);
      },
    };
  }

  /**
   * A call of this process that no other caller of its key joins or is refused for: a `HEAD`,
   * which may run its handler but stands for nothing a `GET` could share.
   */
  apart(): { readonly call: LocalCall; readonly leave: () => void } {
    return { call: this.#create(), leave: () => undefined };
  }

  #create(): LocalCall {
    let start!: () => void;
    const started = new Promise<void>((resolve) => (start = resolve));
    const call: LocalCall = { since: this.clock.now(), executing: false, started };
    this.#start.set(call, start);
    return call;
  }

  /**
   * What a duplicate of `call` is told to wait (its `Retry-After`): the time left on the running
   * handler's lease, as its watchdog last confirmed it, else as counted from the handler's start;
   * at least 1 ms. A duplicate meeting the record on another node reads the same from the store.
   */
  leaseRemainingMs(call: LocalCall, leaseTtl: number): number {
    const remaining = call.leaseRemainingMs?.() ?? leaseTtl - (this.clock.now() - call.since);
    return Math.max(1, Math.ceil(remaining));
  }

  markExecuting(call: LocalCall): void {
    call.executing = true;
    call.since = this.clock.now();
    this.#start.get(call)?.();
  }
}

/**
 * What a caller that joined this process's call waits for: `pending`, or `refuse()` as soon as
 * the call starts its handler. Under `onBusy: 'reject'` a caller that joined while the first was
 * still reading the record (to share a replay) is a duplicate in flight once the handler runs,
 * so it hears its 409 then, as a duplicate on another node would, not when the handler ends.
 * `refuse` throws to refuse, or returns to go on waiting (the handler is the caller's own).
 */
export function refusedOnceExecuting<T>(
  call: LocalCall,
  pending: Promise<T>,
  refuse: () => void,
): Promise<T> {
  const refused = call.started.then(() => {
    refuse();
    return pending;
  });
  return Promise.race([pending, refused]);
}

/**
 * `LocalCalls.duplicateLeaseMs` for idempotent routes: a 409 while this process runs the
 * handler. Synchronous unless the running handler's lease must be asked about.
 */
export function refuseRunningDuplicate(
  local: LocalCalls,
  events: CallEvents,
  localKey: string,
  route: { operation: string; onBusy: 'reject' | 'wait'; leaseTtl: number },
  identity: string,
): void | Promise<void> {
  const refuse = (localLeaseMs: number | undefined) => {
    if (localLeaseMs === undefined) return;
    events.emit('idempotency', 'conflict', route.operation, identity);
    throw new IdempotencyConflictError(identity, localLeaseMs);
  };
  const localLeaseMs = local.duplicateLeaseMs(localKey, route);
  return localLeaseMs instanceof Promise ? localLeaseMs.then(refuse) : refuse(localLeaseMs);
}
