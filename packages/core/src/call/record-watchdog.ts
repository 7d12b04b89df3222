import { HandlerDeadline } from './handler-deadline.js';
import type { MaxDurationExceededError } from '../flight/max-duration-exceeded.error.js';
import type {
  IdempotencyRecordStore,
  RecordLease,
} from '../record/idempotency-record-store.port.js';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import { neverAborted } from './handler-context.js';

/**
 * Keeps an idempotency record's lease while its handler runs: renews it at a third of its TTL
 * and ends the run at `maxDuration`. Its signal, made only when the handler reads it, aborts when
 * a renewal finds the lease lost, when the outer signal (the guard's flight) aborts, or at
 * `maxDuration`; `bound` stops waiting for the handler at `maxDuration` only, since a lease lost
 * otherwise is reported once the handler settles.
 */
export class RecordWatchdog {
  #controller: AbortController | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #deadline: HandlerDeadline;
  #lost = false;
  #reason: unknown;

  constructor(
    store: IdempotencyRecordStore,
    lease: RecordLease,
    leaseTtl: number,
    maxDuration: number,
    private readonly outerSignal: () => AbortSignal,
  ) {
    this.#timer = setInterval(
      () => {
        store.renew(lease, leaseTtl).then(
          (held) => {
            if (!held) this.#lose(new LeaseLostError(lease.identity, lease.fence));
          },
          // A failed renewal is not a lost lease: the next one may succeed before expiry.
          () => undefined,
        );
      },
      Math.max(1, Math.floor(leaseTtl / 3)),
    );
    this.#timer.unref();
    this.#deadline = new HandlerDeadline(lease.identity, lease.fence, maxDuration, (expired) => {
      clearInterval(this.#timer);
      this.#lose(expired);
    });
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#lost) this.#controller.abort(this.#reason);
      const outer = this.outerSignal();
      if (outer.aborted) this.#lose(outer.reason);
      else if (outer !== neverAborted) {
        outer.addEventListener('abort', () => this.#lose(outer.reason), { once: true });
      }
    }
    return this.#controller.signal;
  }

  get lost(): boolean {
    return this.#lost;
  }

  /** Set once the handler ran past `maxDuration`. */
  get expired(): MaxDurationExceededError | undefined {
    return this.#deadline.expired;
  }

  /** The handler's outcome, or `MaxDurationExceededError` at `maxDuration`. */
  bound<T>(work: Promise<T>): Promise<T> {
    return this.#deadline.bound(work);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#deadline.clear();
  }

  #lose(reason: unknown): void {
    if (this.#lost) return;
    this.#lost = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
