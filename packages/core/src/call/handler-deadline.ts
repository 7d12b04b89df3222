import { MaxDurationExceededError } from '../flight/max-duration-exceeded.error.js';
import { LazySignal } from '../lease/lazy-signal.js';

/**
 * The `maxDuration` of one run of a handler: at expiry its signal aborts and `bound` stops
 * waiting for the handler, so the caller is answered whether or not the handler ever settles.
 * One unref'd timer, cleared by `clear()`; nothing of it outlives the call.
 */
export class HandlerDeadline {
  readonly #timer: NodeJS.Timeout;
  readonly #signal = new LazySignal();
  #expired: MaxDurationExceededError | undefined;
  #reject: ((reason: unknown) => void) | undefined;
  #unfollow: (() => void) | undefined;

  constructor(
    identity: string,
    fence: number,
    maxDurationMs: number,
    private readonly onExpire: (error: MaxDurationExceededError) => void = () => undefined,
  ) {
    this.#timer = setTimeout(
      () => this.#expire(new MaxDurationExceededError(identity, fence, maxDurationMs)),
      maxDurationMs,
    );
    this.#timer.unref();
  }

  /**
   * Ends this deadline with an enclosing call's expiry when `outer` aborts with one: the work of
   * a call that has run out of time has too.
   */
  follow(outer: AbortSignal): void {
    const onAbort = () => {
      if (outer.reason instanceof MaxDurationExceededError) this.#expire(outer.reason);
    };
    if (outer.aborted) return onAbort();
    outer.addEventListener('abort', onAbort, { once: true });
    this.#unfollow = () => outer.removeEventListener('abort', onAbort);
  }

  /** Aborts at expiry. */
  get signal(): AbortSignal {
    return this.#signal.signal;
  }

  get expired(): MaxDurationExceededError | undefined {
    return this.#expired;
  }

  /** `work`'s outcome, or `MaxDurationExceededError` at expiry if it has not settled by then. */
  bound<T>(work: Promise<T>): Promise<T> {
    if (this.#expired) {
      work.catch(() => undefined);
      return Promise.reject(this.#expired);
    }
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      work.then(resolve, reject);
    });
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#unfollow?.();
    this.#unfollow = undefined;
    this.#reject = undefined;
  }

  #expire(error: MaxDurationExceededError): void {
    if (this.#expired) return;
    clearTimeout(this.#timer);
    this.#expired = error;
    this.#signal.abort(error);
    this.onExpire(error);
    this.#reject?.(error);
    this.#reject = undefined;
  }
}
