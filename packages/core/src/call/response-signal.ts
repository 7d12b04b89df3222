import type { StoredResponse } from '../record/stored-response.js';
import type { HttpResponse } from '../http/http-response.js';

/**
 * Carries a response out of a flight's work as a failure, so the engine treats it as one: a
 * deterministic 4xx is shared with waiters and cached for `errorTtl`; anything else that must not
 * be kept (5xx, 408, 409, 429, …) releases the lease. Never reaches a framework: the executor
 * turns it back into the response it carries.
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
