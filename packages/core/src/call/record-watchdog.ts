import type { MaxDurationExceededError } from '../flight/max-duration-exceeded.error.js';
import { LazySignal } from '../lease/lazy-signal.js';
import type { LeaseLostError } from '../errors/lease-lost.error.js';
import { LeaseWatchdog } from '../lease/lease-watchdog.js';
import type {
  IdempotencyRecordStore,
  RecordLease,
} from '../record/idempotency-record-store.port.js';
import { neverAborted } from './handler-context.js';
import { HandlerDeadline } from './handler-deadline.js';

/**
 * Watches one run of a handler under an idempotency record: the record's lease (a
 * `LeaseWatchdog` renewing it through the store), the route's `maxDuration`, and the guard
 * flight's signal around it. Its signal, made only when the handler reads it, aborts when the
 * lease is lost, when the outer signal aborts, or at `maxDuration`; `bound` stops waiting for the
 * handler at `maxDuration` only, since a lease lost otherwise is reported once the handler
 * settles.
 */
export class RecordWatchdog {
  readonly #signal = new LazySignal();
  readonly #lease: LeaseWatchdog;
  readonly #deadline: HandlerDeadline;

  constructor(
    store: IdempotencyRecordStore,
    lease: RecordLease,
    watched: { readonly leaseTtl: number; readonly askedAt: number; readonly maxDuration: number },
    private readonly outerSignal: () => AbortSignal,
  ) {
    const { leaseTtl } = watched;
    this.#lease = new LeaseWatchdog({
      key: lease.identity,
      fence: lease.fence,
      ttl: leaseTtl,
      since: watched.askedAt,
      renew: () => store.renew(lease, leaseTtl),
      onLost: (lost) => this.#signal.abort(lost),
    });
    this.#deadline = new HandlerDeadline(
      lease.identity,
      lease.fence,
      watched.maxDuration,
      (expired) => {
        this.#lease.stop();
        this.#signal.abort(expired);
      },
    );
  }

  get signal(): AbortSignal {
    if (!this.#signal.read) this.#followOuterSignal();
    return this.#signal.signal;
  }

  get lost(): boolean {
    return this.#signal.aborted;
  }

  /** Set once the handler ran past `maxDuration`. */
  get expired(): MaxDurationExceededError | undefined {
    return this.#deadline.expired;
  }

  /** Whether the record's lease still holds, asked of the store now (`LeaseWatchdog.confirm`). */
  confirmLease(): Promise<boolean> {
    return this.#lease.confirm();
  }

  /** Time left on the record's lease as last confirmed (`LeaseWatchdog.remainingMs`). */
  leaseRemainingMs(): number {
    return this.#lease.remainingMs;
  }

  /** The record's lease found lost at completion, released or expired (`LeaseWatchdog`). */
  leaseLost(cause?: unknown): LeaseLostError {
    return this.#lease.lostAtCompletion(cause);
  }

  /** The handler's outcome, or `MaxDurationExceededError` at `maxDuration`. */
  bound<T>(work: Promise<T>): Promise<T> {
    return this.#deadline.bound(work);
  }

  stop(): void {
    this.#lease.stop();
    this.#deadline.clear();
  }

  /** Only once the handler reads its signal: the outer one matters to no one before. */
  #followOuterSignal(): void {
    const outer = this.outerSignal();
    if (outer.aborted) this.#signal.abort(outer.reason);
    else if (outer !== neverAborted) {
      outer.addEventListener('abort', () => this.#signal.abort(outer.reason), { once: true });
    }
  }
}
