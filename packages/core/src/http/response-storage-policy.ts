// Outcomes that depend on timing, load or credentials rather than on the request itself: a
// retry may well succeed, so replaying them would pin the client to a failure forever.
const NOT_DETERMINISTIC = new Set([401, 407, 408, 409, 423, 425, 429]);

/**
 * Whether a response is kept for replays (and shared by SingleFlight): 2xx, and the 4xx that the
 * same request would get again. Never 1xx/3xx, 5xx, 408, 409, 425, 429 (nor 401, 407, 423, which
 * depend on credentials or locks), and never thrown errors, which do not reach this check.
 */
export function isStorableStatus(status: number): boolean {
  if (status >= 200 && status < 300) return true;
  return isDeterministicClientError(status);
}

/** A 4xx the same request would get again: a validation-type failure, shared and cached briefly. */
export function isDeterministicClientError(status: number): boolean {
  return status >= 400 && status < 500 && !NOT_DETERMINISTIC.has(status);
}
