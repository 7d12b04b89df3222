import type { ValueFidelity } from '../flight/value-tree.js';
import type { KeyContext } from '../key/key.types.js';
import type { HandlerContext } from './protected-call.types.js';
import type { ProtectedRoute } from './protected-route.js';

/**
 * A protected call whose handler returns a value rather than an HTTP response: a message
 * handler, a GraphQL resolver, a provider method. Throwing is how such a handler fails.
 */
export interface ValueCall {
  /** The route as defined once at start-up. */
  readonly route: ProtectedRoute;
  /**
   * What the keys are built from (arguments, payload, headers). A call whose keys cannot be built
   * is refused with an oncely event (`refused`), since no client sees a message's or a job's error.
   */
  readonly keyContext: KeyContext;
  /**
   * Runs the handler. Its value is kept as `fidelity` says; one that cannot be kept ends the call
   * (and every retry of its key) with `UnstorableValueError`, never with another run.
   */
  readonly run: (context: HandlerContext) => Promise<unknown>;
  /**
   * `exact` (default) for callers in this program, such as provider methods: the value comes
   * back with its types (`Date`, `bigint`, `Map`, `Set`, bytes) or is refused; `json` for values
   * a transport serialises as JSON anyway (messages, GraphQL), where a class instance is kept as
   * JSON would send it.
   */
  readonly fidelity?: ValueFidelity;
}

/** What the executor answers a value call with. */
export interface ValueCallResult {
  /** The handler's value as kept (a copy, the same for the first caller and every replay). */
  readonly value: unknown;
  /** Whether `value` was kept by an earlier or concurrent call rather than produced by this one. */
  readonly replayed: boolean;
}

/**
 * The status a value call's record is kept under. The record format is that of a response; no
 * caller of `executeValue` ever sees it.
 */
export const VALUE_CALL_STATUS = 200;
