import type { ProtectedRoute } from '../call/protected-route.js';
import type { IdempotencyKeyMode } from '../call/route-options.js';
import { DEFAULT_FINGERPRINT_BITS, DEFAULT_KEY_VERSION } from '../key/key.constants.js';
import type { KeyFieldSource, KeySpec, StringNormalization } from '../key/key.types.js';

/**
 * One route's claim on an operation, for one mechanism, as the service's registry lists it: what
 * the key is built from, how long what it keeps lives, who owns it. Plain data (strings, numbers,
 * booleans, arrays), so it can be written as YAML and compared; functions appear by name.
 */
export interface RegistryClaim {
  /** The claimed operation, without namespace and version. */
  readonly operation: string;
  /** The operation's key version (`v1` unless declared). */
  readonly version: string;
  /** The app's namespace, the first part of every key. */
  readonly namespace: string;
  /** Which mechanism claims the operation. */
  readonly mechanism: 'idempotency' | 'single-flight';
  /** The service owning the claim (the `service` option). */
  readonly owner: string;
  /** The route or handler claiming it, e.g. `OrdersController.create (POST /orders)`. */
  readonly route: string;
  /** The route's `description` option, when it has one. */
  readonly description?: string;
  /** Context paths of the key's scope (whose request it is: tenant, user). */
  readonly scope: readonly string[];
  /** Context paths of the key's target (what it acts on). */
  readonly target: readonly string[];
  /** Context paths hashed into the fingerprint. */
  readonly input: readonly string[];
  /** Idempotency claims: whether the client's `Idempotency-Key` joins the identity. */
  readonly clientKey?: IdempotencyKeyMode;
  /** Whether other routes may claim the same operation (`shared: true`). */
  readonly shared: boolean;
  /** Bits of the payload fingerprint kept in the key. */
  readonly fingerprintBits: number;
  /** Per-field string normalisation, when declared: `exact`, `trim` or `function <name>`. */
  readonly normalize?: Readonly<Record<string, string>>;
  /** Arrays whose order does not count, when declared. */
  readonly unordered?: readonly string[];
  /**
   * Lifetimes in milliseconds: `lease`, `retention` and `replayCache` for idempotency; `lease`,
   * `result` and `error` for SingleFlight.
   */
  readonly ttl: Readonly<Record<string, number>>;
  /** Longest run of the handler while it holds the key, in milliseconds. */
  readonly maxDuration: number;
}

/** The claims one defined route makes: one per mechanism it uses. */
export function registryClaimsOf(route: ProtectedRoute, owner: string): RegistryClaim[] {
  const claims: RegistryClaim[] = [];
  const { idempotent, singleFlight } = route;
  if (idempotent) {
    claims.push({
      ...claimBase(idempotent.spec, 'idempotency', owner, route.name, idempotent.description),
      clientKey: idempotent.idempotencyKey,
      ...claimTail(idempotent.spec, idempotent.shared, idempotent.maxDuration, {
        lease: idempotent.leaseTtl,
        retention: idempotent.retention,
        replayCache: idempotent.replayCacheTtl,
      }),
    });
  }
  if (singleFlight) {
    claims.push({
      ...claimBase(singleFlight.spec, 'single-flight', owner, route.name, singleFlight.description),
      ...claimTail(singleFlight.spec, singleFlight.shared, singleFlight.maxDuration, {
        lease: singleFlight.leaseTtl,
        result: singleFlight.resultTtl,
        error: singleFlight.errorTtl,
      }),
    });
  }
  return claims;
}

function claimBase(
  spec: KeySpec,
  mechanism: RegistryClaim['mechanism'],
  owner: string,
  route: string,
  description: string | undefined,
) {
  return {
    operation: spec.operation,
    version: spec.version ?? DEFAULT_KEY_VERSION,
    namespace: spec.namespace,
    mechanism,
    owner,
    route,
    ...(description !== undefined && { description }),
    scope: listOf(spec.scope).map(describeSource),
    target: listOf(spec.target).map(describeSource),
    input: spec.input === undefined ? ['body'] : [spec.input].flat(),
  };
}

function claimTail(
  spec: KeySpec,
  shared: boolean,
  maxDuration: number,
  ttl: Record<string, number>,
) {
  return {
    shared,
    fingerprintBits: spec.fingerprintBits ?? DEFAULT_FINGERPRINT_BITS,
    ...(spec.normalize && { normalize: describeNormalize(spec.normalize) }),
    ...(spec.unordered && { unordered: [...spec.unordered] }),
    ttl,
    maxDuration,
  };
}

function listOf(value: KeySpec['scope']): readonly KeyFieldSource[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? (value as readonly KeyFieldSource[]) : [value as KeyFieldSource];
}

/**
 * A scope or target source as text: its path, `(optional, default …)` after an optional one, a
 * function by its name (its source text differs between compilers, so it would not compare).
 */
function describeSource(source: KeyFieldSource): string {
  if (typeof source === 'string') return source;
  if (typeof source === 'function') return describeFunction(source);
  if (source.optional === true) {
    return `${source.path} (optional, default ${describeDefault(source.default)})`;
  }
  return source.path;
}

function describeDefault(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return `${value}n`;
  return JSON.stringify(value);
}

function describeNormalize(
  rules: Readonly<Record<string, StringNormalization>>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rules).map(([path, rule]) => [
      path,
      typeof rule === 'function' ? describeFunction(rule) : rule,
    ]),
  );
}

function describeFunction(fn: (...args: never[]) => unknown): string {
  return fn.name === '' ? 'function (anonymous)' : `function ${fn.name}`;
}
