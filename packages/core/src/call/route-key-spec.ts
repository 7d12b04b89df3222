import type { KeyContext, KeyFieldSource, KeySpec } from '../key/key.types.js';
import { KEY_SPEC_PROPERTIES } from '../key/key-spec.compiler.js';
import type {
  IdempotentRouteOptions,
  ProtectionDefaults,
  SingleFlightRouteOptions,
} from './route-options.js';

/** The parsed client key, handed to the key builder next to the request context. */
export const CLIENT_IDEMPOTENCY_KEY = Symbol('oncely:client-idempotency-key');

/** A key context that may carry the parsed client `Idempotency-Key`. */
export type CallKeyContext = KeyContext & { readonly [CLIENT_IDEMPOTENCY_KEY]?: string };

export function specOf(options: RouteKeySpecLike, defaults: ProtectionDefaults): KeySpec {
  const spec: Record<string, unknown> = {};
  for (const key of KEY_SPEC_PROPERTIES) {
    if (options[key] !== undefined) spec[key] = options[key];
  }
  spec.namespace ??= defaults.namespace;
  if (spec.fingerprintBits === undefined && defaults.fingerprintBits !== undefined) {
    spec.fingerprintBits = defaults.fingerprintBits;
  }
  return spec as unknown as KeySpec;
}

type RouteKeySpecLike = Partial<Record<(typeof KEY_SPEC_PROPERTIES)[number], unknown>>;

/** `spec` with the parsed client key appended to its target. */
export function withClientKeyTarget(spec: KeySpec): KeySpec {
  return { ...spec, target: [...sources(spec.target), clientIdempotencyKey] };
}

function sources(value: KeySpec['target']): KeyFieldSource[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? [...(value as KeyFieldSource[])] : [value as KeyFieldSource];
}

/** Target source reading the parsed client key; named so a missing key names it. */
function clientIdempotencyKey(ctx: KeyContext): unknown {
  return (ctx as CallKeyContext)[CLIENT_IDEMPOTENCY_KEY];
}

/**
 * How a route builds its key, as text: two routes with equal shapes build comparable keys for
 * equal requests. Functions are described by their source text.
 */
export function describeKeyShape(
  spec: KeySpec,
  options: IdempotentRouteOptions | SingleFlightRouteOptions,
): string {
  const { namespace: _namespace, operation: _operation, version: _version, ...shape } = spec;
  const clientKey = 'idempotencyKey' in options ? (options.idempotencyKey ?? 'required') : 'none';
  return JSON.stringify({ ...shape, clientKey }, (_key, value: unknown) =>
    typeof value === 'function' ? `function ${value.toString()}` : value,
  );
}
