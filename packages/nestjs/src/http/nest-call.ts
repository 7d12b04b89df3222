import { lastValueFrom, type Observable, type Subscriber } from 'rxjs';
import type { HandlerOutcome } from '../decorators/handler-settlement.interceptor.js';

/** The rest of Nest's pipeline for one protected request, answered once. */
export class NestCall {
  emitted = false;
  #failed = false;
  #handlerError: unknown;
  #routed: HandlerOutcome | undefined;

  constructor(private readonly subscriber: Subscriber<unknown>) {}

  /** Whether nothing more can reach the client through Nest (answered, or dropped outside). */
  get closed(): boolean {
    return this.emitted || this.#failed || this.subscriber.closed;
  }

  emit(value: unknown): void {
    if (this.closed) return;
    this.emitted = true;
    this.subscriber.next(value);
    this.subscriber.complete();
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.#failed = true;
    this.subscriber.error(error);
  }

  /** Notes that the handler threw (not kept), and what the inner layers made of it. */
  handlerFailed(error: unknown, routed: HandlerOutcome): unknown {
    this.#handlerError = error;
    this.#routed = routed;
    return error;
  }

  /**
   * Answers a call the executor ended in error. When that is the handler's own error, the client
   * gets what the inner layers made of it (an inner `catchError` fallback value included).
   */
  settleFailure(error: unknown, toHttpError: (error: unknown) => unknown): void {
    // Already answered (a timeout layer's 408): mapping the error would set its headers on a
    // sent response, which Express refuses by throwing.
    if (this.closed) return;
    const routed = error === this.#handlerError ? this.#routed : undefined;
    if (routed?.kind === 'value') this.emit(routed.value);
    else this.fail(toHttpError(routed?.kind === 'error' ? routed.error : error));
  }
}

/** Subscribes once and reports how the observable ended, never throwing. */
export function outcomeOf(observable: Observable<unknown>): Promise<HandlerOutcome> {
  return lastValueFrom(observable, { defaultValue: undefined }).then(
    (value) => ({ kind: 'value', value }),
    (error: unknown) => ({ kind: 'error', error }),
  );
}
