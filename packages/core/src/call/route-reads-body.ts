import { compileKeySpec } from '../key/key-spec.compiler.js';
import type { KeyFieldSource, KeySpec } from '../key/key.types.js';
import type { ProtectedRoute } from './protected-route.js';

/**
 * Whether a route's keys read the request body: a scope or target path under `body`, or an
 * input path under `body` or `files` (the default input is the whole body and the uploads). A framework whose bodies need a
 * parser checks it once per route, so it can refuse such a route's requests when nothing parsed
 * the body, instead of keying them all on the same missing body. Function sources are not
 * looked into: what they read is their own business.
 */
export function routeReadsBody(route: ProtectedRoute): boolean {
  return [route.idempotent?.spec, route.singleFlight?.spec].some(
    (spec) => spec !== undefined && specReadsBody(spec),
  );
}

function specReadsBody(spec: KeySpec): boolean {
  const { input } = compileKeySpec(spec);
  if (input.some((path) => path[0] === 'body' || path[0] === 'files')) return true;
  return [spec.scope, spec.target].some((sources) => listOf(sources).some(readsBody));
}

function readsBody(source: KeyFieldSource): boolean {
  const path = typeof source === 'string' ? source : typeof source === 'object' && source.path;
  return typeof path === 'string' && (path === 'body' || path.startsWith('body.'));
}

function listOf(
  sources: KeyFieldSource | readonly KeyFieldSource[] | undefined,
): readonly KeyFieldSource[] {
  if (sources === undefined) return [];
  return Array.isArray(sources)
    ? (sources as readonly KeyFieldSource[])
    : [sources as KeyFieldSource];
}
