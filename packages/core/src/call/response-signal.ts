import type { StoredResponse } from '../record/stored-response.js';
import type { HttpResponse } from '../http/http-response.js';

/**
 * Carries a response out of an engine's work as a failure, so the engine treats it as one. The
 * only exception the call layer throws on purpose; it never reaches a framework.
 *
 * - `kept` (a deterministic 4xx, on SingleFlight routes): the flight shares it with its waiters
 *   and caches it for `errorTtl`; `httpCallFailurePolicy` carries it across processes whole.
 * - `unkept` (5xx, 408, 409, 429, …): the flight releases its lease and caches nothing; under a
 *   record, the record is released too, so that a retry runs again.
 *
 * Where it ends: the call that ran the handler answers with its own response (`OwnReply`);
 * a call that shared the run answers with the one the signal carries (`sharedReply`).
 */
export class ResponseSignal extends Error {
  private constructor(
    /** What callers other than the leader answer with: replay headers only. */
    readonly response: HttpResponse,
    readonly deterministic: boolean,
  ) {
    super(`Response ${response.status} carried out of a flight`);
    this.name = 'ResponseSignal';
  }

  /** A deterministic 4xx: shared with waiters and cached for `errorTtl`. */
  static kept(response: StoredResponse): ResponseSignal {
    return new ResponseSignal(response, true);
  }

  /** A response that must not be kept: the lease is released, nothing is cached. */
  static unkept(response: HttpResponse): ResponseSignal {
    return new ResponseSignal(response, false);
  }
}
