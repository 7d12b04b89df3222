import { systemClock } from '../time/clock.js';
import { CallEvents } from './call-events.js';
import { resolveCallKeys, type CallKeys } from './call-keys.js';
import { runHandler } from './handler-run.js';
import { needsGuard, runGuarded } from './idempotency-guard.js';
import { LocalCalls } from './local-calls.js';
import type {
  CallEnvironment,
  ProtectedCall,
  ProtectedCallEngines,
  ProtectedCallResult,
} from './protected-call.types.js';
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
 * - a `@SingleFlight` route alone (`coalesced-call.ts`), or the bare handler (`handler-run.ts`).
 *
 * Throws the typed errors `toProblemResponse` maps (409, 422, 413, 503, …); errors of the handler
 * itself pass through.
 */
export class ProtectedCallExecutor {
  readonly #env: CallEnvironment;

  constructor(engines: ProtectedCallEngines) {
    const clock = engines.clock ?? systemClock;
    this.#env = {
      engines,
      clock,
      events: new CallEvents(engines.events ?? [], clock),
      local: new LocalCalls(clock),
    };
  }

  /** Keys this process is calling, waiting for or running a handler for (diagnostics). */
  get inFlight(): number {
    return this.#env.local.size;
  }

  /** Runs a call whose handler answers with an HTTP response. */
  async execute(call: ProtectedCall): Promise<ProtectedCallResult> {
    const env = this.#env;
    const { idempotent } = call.route;
    const identity = call.keys.idempotency;
    if (!idempotent || !identity) return runHandler(env, call, undefined);
    return needsGuard(env, idempotent)
      ? runGuarded(env, call, idempotent, identity)
      : runRecorded(env, call, idempotent, identity);
  }

  /**
   * Runs a call whose handler returns a value (a message handler, a resolver, a provider method)
   * under the same protection, and hands back the value, or the kept one for a replay.
   */
  async executeValue(call: ValueCall): Promise<ValueCallResult> {
    const { route, run, fidelity = 'exact' } = call;
    const { response, replayed } = await this.execute({
      route,
      keys: this.#keysOf(call),
      handler: async (context) => ({
        status: VALUE_CALL_STATUS,
        headers: {},
        body: keptValueBody(await run(context), fidelity),
      }),
    });
    return { value: valueOfKept(response.body, route.name), replayed };
  }

  /** A message or a job refused for its keys is reported: nobody else would hear of it. */
  #keysOf({ route, keyContext }: ValueCall): CallKeys {
    try {
      return resolveCallKeys(route, keyContext);
    } catch (error) {
      const { idempotent, singleFlight } = route;
      const operation = (idempotent ?? singleFlight)?.operation ?? route.name;
      const mechanism = idempotent ? 'idempotency' : 'single-flight';
      this.#env.events.emit(mechanism, 'refused', operation, operation, undefined, error);
      throw error;
    }
  }
}
