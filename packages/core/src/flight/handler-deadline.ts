import { MaxDurationExceededError } from './max-duration-exceeded.error.js';

/**
 * The `maxDuration` of one run of a handler: at expiry its signal aborts and `bound` stops
 * waiting for the handler, so the caller is answered whether or not the handler ever settles.
 * One unref'd timer, cleared by `clear()`; nothing of it outlives the call.
 */
export class HandlerDeadline {
  readonly #timer: NodeJS.Timeout;
  #controller: AbortController | undefined;
  #expired: MaxDurationExceededError | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(
    identity: string,
    fence: number,
    maxDurationMs: number,
    private readonly onExpire: (error: MaxDurationExceededError) => void = () => undefined,
  ) {
    this.#timer = setTimeout(() => {
      this.#expired = new MaxDurationExceededError(identity, fence, maxDurationMs);
      this.#controller?.abort(this.#expired);
      this.onExpire(this.#expired);
      this.#reject?.(this.#expired);
      this.#reject = undefined;
    }, maxDurationMs);
    this.#timer.unref();
  }

  /** Aborts at expiry; made on first read, as most handlers never read it. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#expired) this.#controller.abort(this.#expired);
    }
    return this.#controller.signal;
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
    this.#reject = undefined;
  }
}
