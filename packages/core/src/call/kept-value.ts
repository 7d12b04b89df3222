import { ResultNotSerializableError } from '../flight/result-not-serializable.error.js';
import { fromValueTree, toValueTree, type ValueFidelity } from '../flight/value-tree.js';
import { storedBodyValue, type HttpResponse } from '../http/http-response.js';
import type { StoredBody } from '../record/stored-response.js';
import { UnstorableValueError } from './unstorable-value.error.js';
import { VALUE_CALL_STATUS } from './value-call.js';

/** Marks the kept body of a value call, apart from any JSON a value could be. */
const VALUE_MARK = 'oncely:value';

interface KeptValue {
  readonly [VALUE_MARK]: unknown;
  readonly refused?: { readonly path: string; readonly reason: string };
}

/**
 * A value call's result as its record or flight keeps it: the value's tree (`toValueTree`), or,
 * for a value that cannot be kept, the refusal itself, so that the handler's single run ends in
 * a terminal record and every caller, now or on a retry, gets the same `UnstorableValueError`.
 */
export function keptValueBody(value: unknown, fidelity: ValueFidelity): StoredBody {
  let kept: KeptValue;
  try {
    kept = { [VALUE_MARK]: toValueTree(value, fidelity) };
  } catch (error) {
    if (!(error instanceof ResultNotSerializableError)) throw error;
    kept = { [VALUE_MARK]: null, refused: { path: error.path, reason: error.reason } };
  }
  return { kind: 'json', value: kept };
}

/**
 * The value a kept response stands for; throws `UnstorableValueError` for a kept refusal: of the
 * value itself, or of its size (the record keeps the 413 that a too large response gets).
 */
export function valueOfKept(response: HttpResponse, route: string): unknown {
  const { body } = response;
  if (response.status !== VALUE_CALL_STATUS) {
    const { limitBytes } = storedBodyValue(body) as { limitBytes?: number };
    throw new UnstorableValueError(
      route,
      '$',
      `it is larger than the ${String(limitBytes)} bytes kept for it (maxResponseBytes)`,
    );
  }
  if (body.kind !== 'json' || !isKeptValue(body.value)) {
    throw new Error(
      `${route}: its record holds a response oncely did not keep for a value call. Give the call an operation of its own, which no HTTP route shares.`,
    );
  }
  const { refused } = body.value;
  if (refused) throw new UnstorableValueError(route, refused.path, refused.reason);
  return fromValueTree(body.value[VALUE_MARK]);
}

function isKeptValue(value: unknown): value is KeptValue {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, VALUE_MARK);
}
