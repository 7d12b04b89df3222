import type { HttpResponse } from '../http/http-response.js';
import type { ProtectedCallResult } from './protected-call.types.js';
import { ResponseSignal } from './response-signal.js';

/**
 * The reply of the call whose handler ran, kept apart from what the engines hand around.
 *
 * A handler runs inside an engine's work (the guard's flight, the record, a SingleFlight), and
 * what leaves that work is what other callers may see: the kept response, or a `ResponseSignal`
 * for one the engine must treat as a failure. The call that ran the handler answers with the
 * handler's own response instead, every header included, kept or not: the work hands it to
 * `hold`, and the call reads it back once the engine is done, from `result` when the engine
 * returned, from `afterSignal` when it threw.
 */
export class OwnReply {
  #response: HttpResponse | undefined;

  /** Called by the work with the handler's response, before it is kept or signalled. */
  readonly hold = (response: HttpResponse): void => {
    this.#response = response;
  };

  /** This call's answer if its handler ran; `undefined` when it shared another call's run. */
  get result(): ProtectedCallResult | undefined {
    const response = this.#response;
    return response === undefined ? undefined : { response, replayed: false };
  }

  /**
   * This call's answer when the engine threw `error`: its own response if `error` is the signal
   * that carried it out; `undefined` otherwise, and the error (or the signal, for a call that
   * shared another's run) stands.
   */
  afterSignal(error: unknown): ProtectedCallResult | undefined {
    return error instanceof ResponseSignal ? this.result : undefined;
  }
}
