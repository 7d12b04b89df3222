import type { KeySpec } from '../key/key.types.js';
import { validateKeySpec } from '../key/key-spec.compiler.js';
import { DEFAULT_KEY_VERSION } from '../key/key.constants.js';
import { ReplayHeaderPolicy } from '../http/replay-header-policy.js';
import type {
  IdempotencyKeyMode,
  IdempotentRouteOptions,
  ProtectionDefaults,
  SingleFlightRouteOptions,
} from './route-options.js';
import { describeKeyShape, specOf, withClientKeyTarget } from './route-key-spec.js';
import {
  IDEMPOTENT_OPTION_NAMES,
  MAX_DESCRIPTION_LENGTH,
  OptionChecker,
  SINGLE_FLIGHT_OPTION_NAMES,
} from './route-option.checker.js';
import { RouteOptionsError } from './route-setup.errors.js';

export { MAX_TIMER_MS } from './route-option.checker.js';

interface ResolvedCommon {
  /** What the operation does, in the words of its declaration; the registry shows it. */
  readonly description?: string;
  /** The spec as declared, with the namespace filled in. */
  readonly spec: KeySpec;
  /** `namespace:operation:version`: what the registry and events name. */
  readonly operation: string;
  /** Canonical description of how the key is built; equal shapes build comparable keys. */
  readonly shape: string;
  /** Whether the route shares its operation with other routes (`shared: true`). */
  readonly shared: boolean;
  /** Largest response body kept for replays, in bytes. */
  readonly maxResponseBytes: number;
  /** Status refusing a request whose key needs `user.*` and has no principal. */
  readonly missingUserStatus: 400 | 401;
  /** Which response headers are kept and replayed. */
  readonly replayHeaders: ReplayHeaderPolicy;
  /** Longest run of the handler before its key is taken back (`MaxDurationExceededError`). */
  readonly maxDuration: number;
}

/**
 * A route's idempotency options checked and merged with the defaults: durations in milliseconds,
 * header names lower case.
 */
export interface ResolvedIdempotentRoute extends ResolvedCommon {
  /** `spec` with the client key appended to its target, used when the request sends one. */
  readonly specWithClientKey: KeySpec;
  /** Whether the client's key is required, optional or ignored. */
  readonly idempotencyKey: IdempotencyKeyMode;
  /** Name of the header carrying the client's key, lower case. */
  readonly header: string;
  /** Whether the handler's writes and the record's completion share one transaction. */
  readonly transactional: boolean;
  /** What a duplicate gets while the first is in flight: 409 at once, or a wait for the replay. */
  readonly onBusy: 'reject' | 'wait';
  /** How long a duplicate waits with `onBusy: 'wait'` before answering 409. */
  readonly wait: number;
  /** How long the record is held per lease, renewed while the handler runs. */
  readonly leaseTtl: number;
  /** How long a completed record is kept and replayed. */
  readonly retention: number;
  /** How long replays come from the coordinator's result cache before the store. */
  readonly replayCacheTtl: number;
  /** Versions whose records answer a miss, newest first; empty for most routes. */
  readonly previousVersions: readonly string[];
}

/**
 * A route's SingleFlight options checked and merged with the defaults; durations in milliseconds.
 */
export interface ResolvedSingleFlightRoute extends ResolvedCommon {
  /** How long the flight's lease lasts, renewed while the handler runs. */
  readonly leaseTtl: number;
  /** How long the response stays cached after the flight. */
  readonly resultTtl: number;
  /** How long a deterministic 4xx stays cached. */
  readonly errorTtl: number;
  /** How long a concurrent caller waits for the leader's response. */
  readonly wait: number;
  /** What a concurrent caller does: wait for the leader's response, or get 409 at once. */
  readonly onBusy: 'reject' | 'wait';
  /** With the coordinator unreachable: run uncoordinated (`open`) or answer 503 (`closed`). */
  readonly onCoordinatorDown: 'open' | 'closed';
}

/** One protected route: validated once at start-up, used on every request. */
export interface ProtectedRoute {
  /** Human name for messages, e.g. `OrdersController.create` or `POST /orders`. */
  readonly name: string;
  /** Present when the route is idempotent (`@IdempotentKey`, `idempotent()`). */
  readonly idempotent?: ResolvedIdempotentRoute;
  /** Present when the route coalesces concurrent duplicates (`@SingleFlight`, `singleFlight()`). */
  readonly singleFlight?: ResolvedSingleFlightRoute;
}

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
  const check = new OptionChecker(route, options, IDEMPOTENT_OPTION_NAMES);
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
    specWithClientKey: withClientKeyTarget(common.spec),
    idempotencyKey,
    header,
    transactional: check.boolean('transactional', false),
    onBusy: check.oneOf('onBusy', ['reject', 'wait'], 'reject'),
    wait: check.duration('wait', defaults.wait, 0),
    leaseTtl: check.duration('leaseTtl', defaults.leaseTtl, 1),
    retention: check.duration('retention', defaults.retention, 1),
    replayCacheTtl: check.duration('replayCacheTtl', defaults.replayCacheTtl, 0),
    previousVersions: check.previousVersions(common.spec.version ?? DEFAULT_KEY_VERSION),
  };
}

function resolveSingleFlight(
  route: string,
  options: SingleFlightRouteOptions,
  defaults: ProtectionDefaults,
): ResolvedSingleFlightRoute {
  const check = new OptionChecker(route, options, SINGLE_FLIGHT_OPTION_NAMES);
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
  const description = check.line('description', MAX_DESCRIPTION_LENGTH);
  return {
    ...(description !== undefined && { description }),
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
