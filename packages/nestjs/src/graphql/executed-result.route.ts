import type { KeyContext, KeyFieldSource, KeySpec } from '@oncely/core';
import type { ProtectedRoute, ResolvedIdempotentRoute } from '@oncely/core/adapter';

const RESULT_ID = Symbol('oncely:executed-result-id');

type ResultRoute = ProtectedRoute & { readonly idempotent: ResolvedIdempotentRoute };

const resultRoutes = new WeakMap<ProtectedRoute, ResultRoute>();

/**
 * The route of a GraphQL call's executed result: the call's own key and input, one more target
 * segment (the id the call's record names, so every execution has a record of its own and a
 * stale or abandoned one is never read), never transactional (it is written once the response
 * is known, long after the handler's transaction), and its own operation label in events.
 */
export function executedResultRoute(route: ProtectedRoute): ResultRoute {
  const known = resultRoutes.get(route);
  if (known) return known;
  const idempotent = route.idempotent as ResolvedIdempotentRoute;
  const derived: ResultRoute = {
    name: `${route.name} (executed result)`,
    idempotent: {
      ...idempotent,
      operation: `${idempotent.operation}#executed-result`,
      spec: withResultTarget(idempotent.spec),
      specWithClientKey: withResultTarget(idempotent.specWithClientKey),
      transactional: false,
    },
  };
  resultRoutes.set(route, derived);
  return derived;
}

/**
 * The call's key context carrying the result's id. It rides in `params` under a symbol, as the
 * key builder copies the context's known fields only, and no declared path can read a symbol.
 */
export function withExecutedResultId(keyContext: KeyContext, id: string): KeyContext {
  const params = (keyContext.params ?? {}) as Record<string | symbol, unknown>;
  return { ...keyContext, params: { ...params, [RESULT_ID]: id } };
}

function withResultTarget(spec: KeySpec): KeySpec {
  const target = spec.target;
  const sources: KeyFieldSource[] =
    target === undefined ? [] : Array.isArray(target) ? [...target] : [target as KeyFieldSource];
  return { ...spec, target: [...sources, executedResultId] };
}

/** Named: a missing id is reported as `executedResultId`. */
function executedResultId(keyContext: KeyContext): unknown {
  return (keyContext.params as Record<symbol, unknown> | undefined)?.[RESULT_ID];
}
