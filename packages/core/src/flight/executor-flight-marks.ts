// Marks the HTTP executor puts on its `SingleFlight` engines, read by `run` and `peek`.

/** The flights made by `letRejectingCallersJoin`. */
const joinedUnderReject = new WeakSet<object>();

/**
 * For the engines of the HTTP executor, which refuse a duplicate of a running handler themselves
 * (they know when the handler starts, the flight does not): an `onBusy: 'reject'` caller of
 * `flight` joins a flight of this process as long as its lease holds, and so shares what that
 * flight only read (a replay, a foreign owner's refusal).
 */
export function letRejectingCallersJoin<F extends object>(flight: F): F {
  joinedUnderReject.add(flight);
  return flight;
}

/** The flights made by `callerPeeksFirst`. */
const peekedByCaller = new WeakSet<object>();

/**
 * For the engines of the HTTP executor, which `peek` before they join a call of this process:
 * `run` of `flight` does not peek again, so that a miss asks the coordinator's held outcomes
 * once.
 */
export function callerPeeksFirst<F extends object>(flight: F): F {
  peekedByCaller.add(flight);
  return flight;
}

/** Whether `flight` was made by `letRejectingCallersJoin`. */
export function joinsUnderReject(flight: object): boolean {
  return joinedUnderReject.has(flight);
}

/** Whether `flight`'s `run` peeks itself, i.e. it was not made by `callerPeeksFirst`. */
export function peeksBeforeRun(flight: object): boolean {
  return !peekedByCaller.has(flight);
}

/** The flights made by `decodesHeldResultsOnce`. */
const sharingDecodedResults = new WeakSet<object>();

/**
 * For the engines of the HTTP executor, which only read the results they are handed (a kept
 * response, whose value a value call rebuilds afresh): `peek` of `flight` decodes a held result
 * once and hands the same value to every hit on it, rather than a copy to each.
 */
export function decodesHeldResultsOnce<F extends object>(flight: F): F {
  sharingDecodedResults.add(flight);
  return flight;
}

/** Whether `flight` was made by `decodesHeldResultsOnce`. */
export function sharesDecodedResults(flight: object): boolean {
  return sharingDecodedResults.has(flight);
}
