/**
 * An abort signal made only when first read, already aborted if its reason came first: most
 * handlers never read theirs, and an `AbortController` costs more than the rest of a flight.
 */
export class LazySignal {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Whether `signal` has been read: only then can anyone be listening. */
  get read(): boolean {
    return this.#controller !== undefined;
  }

  /** Aborts with `reason`; later calls change nothing. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
