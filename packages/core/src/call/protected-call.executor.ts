import { systemClock } from '../time/clock.js';
import type { CallTracer } from '../tracing/call-tracer.port.js';
import { CallEvents } from './call-events.js';
import { resolveCallKeys, type CallKeys } from './call-keys.js';
import { CallTrace } from './call-trace.js';
import { runHandler } from './handler-run.js';
import { needsGuard, runGuarded } from './idempotency-guard.js';
import { LocalCalls } from './local-calls.js';
import type {
  CallEnvironment,
  ProtectedCall,
  ProtectedCallEngines,
  ProtectedCallResult,
} from './protected-call.types.js';
import { runReadOnly } from './read-only-call.js';
import { runRecorded } from './recorded-call.js';
import { keptValueBody, valueOfKept } from './kept-value.js';
import { VALUE_CALL_STATUS, type ValueCall, type ValueCallResult } from './value-call.js';

export { REPLAYED_HEADER } from './kept-response.js';
export type {
  FlightRunner,
  HandlerContext,
  ProtectedCall,
  ProtectedCallEngines,
  ProtectedCallResult,
} from './protected-call.types.js';

/**
 * Runs one protected call, framework-free, and picks how:
 *
 * - an idempotent route behind the guard (`idempotency-guard.ts`): a flight on the identity in
 *   front of the durable record, where the store is slower than the coordinator or the route
 *   waits for duplicates;
 * - an idempotent route on the record store alone (`recorded-call.ts`) otherwise;
 * - either way the record protocol (`record-protocol.ts`) runs the handler under the record
 *   (`record-execution.ts`), through the route's SingleFlight if it has one;
 * - a `@SingleFlight` route alone (`coalesced-call.ts`), or the bare handler (`handler-run.ts`);
 * - a read-only call (`HEAD`) on an idempotent route reads the record and keeps nothing
 *   (`read-only-call.ts`); on a SingleFlight it never leads.
 *
 * Throws the typed errors `toProblemResponse` maps (409, 422, 413, 503, …); errors of the handler
 * itself pass through.
 *
 * With a tracer (`engines.tracer`), each call runs inside a span of its own (`call-trace.ts`);
 * without one, nothing of tracing runs.
 */
export class ProtectedCallExecutor {
  readonly #env: CallEnvironment;
  readonly #tracer: () => CallTracer | undefined;

  constructor(engines: ProtectedCallEngines) {
    const clock = engines.clock ?? systemClock;
    this.#env = {
      engines,
      clock,
      events: new CallEvents(engines.events ?? [], clock),
      local: new LocalCalls(clock),
    };
    const { tracer } = engines;
    this.#tracer = typeof tracer === 'function' ? tracer : () => tracer;
  }

  /** Keys this process is calling, waiting for or running a handler for (diagnostics). */
  get inFlight(): number {
    return this.#env.local.size;
  }

  /** Runs a call whose handler answers with an HTTP response. */
  async execute(call: ProtectedCall): Promise<ProtectedCallResult> {
    const tracer = this.#tracer();
    if (tracer === undefined || tracer.enabled?.() === false) return this.#execute(this.#env, call);
    return CallTrace.run(tracer, call.route, (trace) => {
      trace.keys(call.keys);
      return this.#execute(this.#traced(trace), call);
    });
  }

  /**
   * Runs a call whose handler returns a value (a message handler, a resolver, a provider method)
   * under the same protection, and hands back the value, or the kept one for a replay.
   */
  async executeValue(call: ValueCall): Promise<ValueCallResult> {
    const tracer = this.#tracer();
    if (tracer === undefined || tracer.enabled?.() === false) {
      return this.#executeValue(this.#env, call, undefined);
    }
    return CallTrace.run(tracer, call.route, (trace) =>
      this.#executeValue(this.#traced(trace), call, trace),
    );
  }

  #execute(env: CallEnvironment, call: ProtectedCall): Promise<ProtectedCallResult> {
    const { idempotent } = call.route;
    const identity = call.keys.idempotency;
    if (!idempotent || !identity) return runHandler(env, call, undefined);
    if (call.readOnly) return runReadOnly(env, call, idempotent, identity);
    return needsGuard(env, idempotent)
      ? runGuarded(env, call, idempotent, identity)
      : runRecorded(env, call, idempotent, identity);
  }

  async #executeValue(
    env: CallEnvironment,
    call: ValueCall,
    trace: CallTrace | undefined,
  ): Promise<ValueCallResult> {
    const { route, run, fidelity = 'exact' } = call;
    const keys = keysOf(env, call);
    trace?.keys(keys);
    const { response, replayed } = await this.#execute(env, {
      route,
      keys,
      handler: async (context) => ({
        status: VALUE_CALL_STATUS,
        headers: {},
        body: keptValueBody(await run(context), fidelity),
      }),
    });
    return { value: valueOfKept(response, route.name), replayed };
  }

  /** This executor's environment for one traced call, whose decisions its trace hears. */
  #traced(trace: CallTrace): CallEnvironment {
    return { ...this.#env, events: this.#env.events.observedBy(trace.decided) };
  }
}

/** A message or a job refused for its keys is reported: nobody else would hear of it. */
function keysOf(env: CallEnvironment, { route, keyContext }: ValueCall): CallKeys {
  try {
    return resolveCallKeys(route, keyContext);
  } catch (error) {
    const { idempotent, singleFlight } = route;
    const operation = (idempotent ?? singleFlight)?.operation ?? route.name;
    const mechanism = idempotent ? 'idempotency' : 'single-flight';
    env.events.emit(mechanism, 'refused', operation, operation, undefined, error);
    throw error;
  }
}
