import { runCoalesced } from './coalesced-call.js';
import { handlerContext, noOuterSignal } from './handler-context.js';
import type {
  CallEnvironment,
  ProtectedCall,
  ProtectedCallResult,
} from './protected-call.types.js';

/**
 * The handler through the route's SingleFlight if it has one, else the handler itself: what an
 * unguarded call runs, and what runs under an idempotency record once it is acquired.
 */
export async function runHandler(
  env: CallEnvironment,
  call: ProtectedCall,
  transaction: unknown,
  signalOf: () => AbortSignal = noOuterSignal,
): Promise<ProtectedCallResult> {
  const route = call.route.singleFlight;
  const key = call.keys.singleFlight;
  const context = handlerContext(signalOf, transaction);
  if (!route || !key) return { response: await call.handler(context), replayed: false };
  return runCoalesced(env, call, route, key.key, context, signalOf !== noOuterSignal);
}
