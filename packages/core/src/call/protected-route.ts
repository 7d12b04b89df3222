import { describeOptionValue } from '../errors/describe-option-value.js';
import type { KeyContext, KeyFieldSource, KeySpec } from '../key/key.types.js';
import { KEY_SPEC_PROPERTIES, validateKeySpec } from '../key/key-spec.compiler.js';
import { ReplayHeaderPolicy } from '../http/replay-header-policy.js';
import type {
  IdempotencyKeyMode,
  IdempotentRouteOptions,
  ProtectionDefaults,
  SingleFlightRouteOptions,
} from './route-options.js';
import { RouteOptionsError } from './route-setup.errors.js';

/** The parsed client key, handed to the key builder next to the request context. */
export const CLIENT_IDEMPOTENCY_KEY = Symbol('oncely:client-idempotency-key');

/** A key context that may carry the parsed client `Idempotency-Key`. */
export type CallKeyContext = KeyContext & { readonly [CLIENT_IDEMPOTENCY_KEY]?: string };

interface ResolvedCommon {
  /** The spec as declared, with the namespace filled in. */
  readonly spec: KeySpec;
  /** `namespace:operation:version`: what the registry and events name. */
  readonly operation: string;
  /** Canonical description of how the key is built; equal shapes build comparable keys. */
  readonly shape: string;
  readonly shared: boolean;
  readonly maxResponseBytes: number;
  readonly missingUserStatus: 400 | 401;
  readonly replayHeaders: ReplayHeaderPolicy;
  /** Longest run of the handler before its key is taken back (`MaxDurationExceededError`). */
  readonly maxDuration: number;
}

export interface ResolvedIdempotentRoute extends ResolvedCommon {
  /** `spec` with the client key appended to its target, used when the request sends one. */
  readonly specWithClientKey: KeySpec;
  readonly idempotencyKey: IdempotencyKeyMode;
  readonly header: string;
  readonly transactional: boolean;
  readonly onBusy: 'reject' | 'wait';
  readonly wait: number;
  readonly leaseTtl: number;
  readonly retention: number;
  readonly replayCacheTtl: number;
}

export interface ResolvedSingleFlightRoute extends ResolvedCommon {
  readonly leaseTtl: number;
  readonly resultTtl: number;
  readonly errorTtl: number;
  readonly wait: number;
  readonly onBusy: 'reject' | 'wait';
  readonly onCoordinatorDown: 'open' | 'closed';
}

/** One protected route: validated once at start-up, used on every request. */
export interface ProtectedRoute {
  /** Human name for messages, e.g. `OrdersController.create` or `POST /orders`. */
  readonly name: string;
  readonly idempotent?: ResolvedIdempotentRoute;
  readonly singleFlight?: ResolvedSingleFlightRoute;
}

const COMMON_KEYS = [
  'shared',
  'maxResponseBytes',
  'missingUserStatus',
  'replayHeaders',
  'maxDuration',
];
const IDEMPOTENT_KEYS = new Set<string>([
  ...KEY_SPEC_PROPERTIES,
  ...COMMON_KEYS,
  'idempotencyKey',
  'header',
  'transactional',
  'onBusy',
  'wait',
  'leaseTtl',
  'retention',
  'replayCacheTtl',
]);
const SINGLE_FLIGHT_KEYS = new Set<string>([
  ...KEY_SPEC_PROPERTIES,
  ...COMMON_KEYS,
  'leaseTtl',
  'resultTtl',
  'errorTtl',
  'wait',
  'onBusy',
  'onCoordinatorDown',
]);
/** Node's largest timer delay; a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * Validates a route's options against the defaults and resolves them, naming the route and the
 * bad option in every error. Call it once per route at start-up (decorator discovery, middleware
 * creation), never per request.
 */
export function defineProtectedRoute(
  name: string,
  declared: { idempotent?: IdempotentRouteOptions; singleFlight?: SingleFlightRouteOptions },
  defaults: ProtectionDefaults,
): ProtectedRoute {
  return {
    name,
    ...(declared.idempotent && {
      idempotent: resolveIdempotent(name, declared.idempotent, defaults),
    }),
    ...(declared.singleFlight && {
      singleFlight: resolveSingleFlight(name, declared.singleFlight, defaults),
    }),
  };
}

/**
 * Checks a route's options without module defaults (no namespace yet), so that a decorator can
 * fail when it is applied, naming the bad option.
 */
export function checkRouteOptions(
  name: string,
  mechanism: 'idempotent' | 'singleFlight',
  options: IdempotentRouteOptions | SingleFlightRouteOptions,
): void {
  const placeholder: ProtectionDefaults = { namespace: 'check', ...DEFAULTS_FOR_CHECK };
  defineProtectedRoute(name, { [mechanism]: options }, placeholder);
}

const DEFAULTS_FOR_CHECK: Omit<ProtectionDefaults, 'namespace'> = {
  header: 'idempotency-key',
  leaseTtl: 1,
  wait: 0,
  retention: 1,
  replayCacheTtl: 0,
  resultTtl: 0,
  errorTtl: 0,
  maxResponseBytes: 1,
  missingUserStatus: 400,
  onCoordinatorDown: 'open',
  replayHeaders: [],
  maxDuration: 1,
};

function resolveIdempotent(
  route: string,
  options: IdempotentRouteOptions,
  defaults: ProtectionDefaults,
): ResolvedIdempotentRoute {
  const check = new OptionChecker(route, options, IDEMPOTENT_KEYS);
  const common = resolveCommon(check, options, defaults);
  const idempotencyKey = check.oneOf(
    'idempotencyKey',
    ['required', 'optional', 'ignored'],
    'required',
  );
  const header = (options.header ?? defaults.header).toLowerCase();
  if (!HEADER_NAME.test(header)) {
    check.fail('header', `"${options.header}" is not a valid header name`);
  }
  if (idempotencyKey !== 'ignored' && options.scope === undefined) {
    check.fail(
      'scope',
      `idempotencyKey '${idempotencyKey}' needs a scope (for example scope: 'user.tenantId'), because a client key must never be shared across tenants or users. Declare the scope, or set idempotencyKey: 'ignored' and identify the operation by its target.`,
    );
  }
  return {
    ...common,
    specWithClientKey: {
      ...common.spec,
      target: [...sources(common.spec.target), clientIdempotencyKey],
    },
    idempotencyKey,
    header,
    transactional: check.boolean('transactional', false),
    onBusy: check.oneOf('onBusy', ['reject', 'wait'], 'reject'),
    wait: check.duration('wait', defaults.wait, 0),
    leaseTtl: check.duration('leaseTtl', defaults.leaseTtl, 1),
    retention: check.duration('retention', defaults.retention, 1),
    replayCacheTtl: check.duration('replayCacheTtl', defaults.replayCacheTtl, 0),
  };
}

function resolveSingleFlight(
  route: string,
  options: SingleFlightRouteOptions,
  defaults: ProtectionDefaults,
): ResolvedSingleFlightRoute {
  const check = new OptionChecker(route, options, SINGLE_FLIGHT_KEYS);
  return {
    ...resolveCommon(check, options, defaults),
    leaseTtl: check.duration('leaseTtl', defaults.leaseTtl, 1),
    resultTtl: check.duration('resultTtl', defaults.resultTtl, 0),
    errorTtl: check.duration('errorTtl', defaults.errorTtl, 0),
    wait: check.duration('wait', defaults.wait, 0),
    onBusy: check.oneOf('onBusy', ['reject', 'wait'], 'wait'),
    onCoordinatorDown: check.oneOf(
      'onCoordinatorDown',
      ['open', 'closed'],
      defaults.onCoordinatorDown,
    ),
  };
}

function resolveCommon(
  check: OptionChecker,
  options: IdempotentRouteOptions | SingleFlightRouteOptions,
  defaults: ProtectionDefaults,
): ResolvedCommon {
  check.unknownKeys();
  const spec = specOf(options, defaults);
  try {
    validateKeySpec(spec);
  } catch (error) {
    throw new RouteOptionsError(check.route, 'key spec', (error as Error).message);
  }
  const replayHeaders = check.value('replayHeaders', [], Array.isArray) as readonly string[];
  return {
    spec,
    operation: `${spec.namespace}:${spec.operation}:${spec.version ?? 'v1'}`,
    shape: describeKeyShape(spec, options),
    shared: check.boolean('shared', false),
    maxResponseBytes: check.duration('maxResponseBytes', defaults.maxResponseBytes, 1),
    missingUserStatus: check.oneOf('missingUserStatus', [400, 401], defaults.missingUserStatus),
    replayHeaders: ReplayHeaderPolicy.create([...defaults.replayHeaders, ...replayHeaders]),
    maxDuration: check.timer('maxDuration', defaults.maxDuration),
  };
}

function specOf(options: RouteKeySpecLike, defaults: ProtectionDefaults): KeySpec {
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
function describeKeyShape(
  spec: KeySpec,
  options: IdempotentRouteOptions | SingleFlightRouteOptions,
): string {
  const { namespace: _namespace, operation: _operation, version: _version, ...shape } = spec;
  const clientKey = 'idempotencyKey' in options ? (options.idempotencyKey ?? 'required') : 'none';
  return JSON.stringify({ ...shape, clientKey }, (_key, value: unknown) =>
    typeof value === 'function' ? `function ${value.toString()}` : value,
  );
}

/** Reads and checks options one by one, failing with the route and the option's name. */
class OptionChecker {
  constructor(
    readonly route: string,
    private readonly options: object,
    private readonly allowed: ReadonlySet<string>,
  ) {}

  fail(option: string, problem: string): never {
    throw new RouteOptionsError(this.route, option, problem);
  }

  unknownKeys(): void {
    for (const key of Object.keys(this.options)) {
      if (!this.allowed.has(key)) {
        this.fail(key, `unknown option. Known options: ${[...this.allowed].join(', ')}.`);
      }
    }
  }

  value(option: string, fallback: unknown, valid: (value: unknown) => boolean): unknown {
    const value = (this.options as Record<string, unknown>)[option];
    if (value === undefined) return fallback;
    if (!valid(value)) this.fail(option, `unexpected value ${describeOptionValue(value)}`);
    return value;
  }

  boolean(option: string, fallback: boolean): boolean {
    const value = (this.options as Record<string, unknown>)[option];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean')
      this.fail(option, `must be true or false, got ${describeOptionValue(value)}`);
    return value;
  }

  oneOf<T extends string | number>(option: string, allowed: readonly T[], fallback: T): T {
    const value = (this.options as Record<string, unknown>)[option];
    if (value === undefined) return fallback;
    if (!allowed.includes(value as T)) {
      this.fail(
        option,
        `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${describeOptionValue(value)}`,
      );
    }
    return value as T;
  }

  /** A whole number of milliseconds a timer can wait (Node fires longer ones at once). */
  timer(option: string, fallback: number): number {
    const value = (this.options as Record<string, unknown>)[option] ?? fallback;
    if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_TIMER_MS) {
      this.fail(
        option,
        `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${describeOptionValue(value)}`,
      );
    }
    return value as number;
  }

  duration(option: string, fallback: number, min: number): number {
    const value = (this.options as Record<string, unknown>)[option] ?? fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
      this.fail(
        option,
        `must be a finite number of at least ${min} (milliseconds or bytes), got ${describeOptionValue(value)}`,
      );
    }
    return value;
  }
}
