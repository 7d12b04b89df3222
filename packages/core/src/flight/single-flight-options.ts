import { randomUUID } from 'node:crypto';
import type { OncelyEventListener } from '../events/oncely-event.js';
import type { FailurePolicy, FlightOptions } from './flight.types.js';
import { InvalidFlightOptionError } from './invalid-flight-option.error.js';
import { DEFAULT_MAX_RESULT_BYTES } from './result-codec.js';
import { transientFailurePolicy } from './transient-failure.policy.js';

/** Engine-wide settings; the `FlightOptions` fields are defaults each `run` may override. */
export interface SingleFlightOptions extends FlightOptions {
  /** Receives one event per decision; a throwing listener is ignored. */
  readonly events?: OncelyEventListener | readonly OncelyEventListener[];
  /** Makes the owner token of each flight; must be unique across every process. */
  readonly ownerId?: () => string;
  /**
   * The service running this engine (the app's `service`), stamped on every lease it takes (its
   * owner tokens read `<service>#<id>`) and on every result or error it stores: a caller finding
   * a lease of another service on its key fails with `ForeignOwnerError` instead of waiting for
   * that service's result, and one finding a result or error another service stored fails with
   * it instead of taking it, unless the run is `shared`. A lease whose token names no service
   * counts as the caller's own, and so does an outcome stored by an engine without `service`.
   */
  readonly service?: string;
  /**
   * Other services whose leases and stored outcomes count as this one's own (the app's
   * `serviceAliases`, while it is renamed); what it stores still names `service`.
   */
  readonly serviceAliases?: readonly string[];
  /** Largest serialised result (or shared error) the engine stores, in UTF-8 bytes. */
  readonly maxResultBytes?: number;
  /**
   * Minimum time every stored outcome stays readable (so also when `resultTtl`/`errorTtl` is 0),
   * long enough for followers still waiting when the leader completes to read it instead of
   * running the work again. Callers arriving inside that window get it as `cached`. 0 disables
   * it: with `resultTtl: 0`, a waiter then becomes the next leader and runs the work again.
   */
  readonly handoffTtl?: number;
  /** Poll fallback of waiting followers: first delay, doubled up to `max`, with jitter. */
  readonly backoff?: {
    /** First delay between polls (ms; default 50). */
    readonly initial?: number;
    /** Longest delay between polls (ms; default 500). */
    readonly max?: number;
  };
}

/** Ends the service part of an owner token or a stored outcome: service names never contain it. */
export const SERVICE_MARK = '#';

/** The service an owner token (or a stored outcome) names, when it names one. */
export function serviceOfToken(token: string | undefined): string | undefined {
  const mark = token?.indexOf(SERVICE_MARK) ?? -1;
  return mark > 0 ? token!.slice(0, mark) : undefined;
}

export const flightDefaults = {
  leaseTtl: 10_000,
  resultTtl: 60_000,
  errorTtl: 3_000,
  wait: 30_000,
  onBusy: 'wait',
  onCoordinatorDown: 'open',
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
  handoffTtl: 1_000,
  backoffInitial: 50,
  backoffMax: 500,
} as const;

/** Every `FlightOptions` field, resolved and validated. */
export interface ResolvedFlightOptions {
  readonly leaseTtl: number;
  readonly resultTtl: number;
  readonly errorTtl: number;
  readonly wait: number;
  readonly onBusy: 'wait' | 'reject';
  readonly failurePolicy: FailurePolicy;
  readonly onCoordinatorDown: 'open' | 'closed';
}

export interface ResolvedEngineOptions {
  readonly flight: ResolvedFlightOptions;
  readonly listeners: readonly OncelyEventListener[];
  readonly ownerId: () => string;
  readonly service?: string;
  /** `undefined` when there are none: the lease check then compares `service` alone. */
  readonly serviceAliases?: ReadonlySet<string>;
  readonly maxResultBytes: number;
  readonly handoffTtl: number;
  readonly backoffInitial: number;
  readonly backoffMax: number;
}

export function resolveEngineOptions(options: SingleFlightOptions = {}): ResolvedEngineOptions {
  const flight = resolveFlightOptions(options, {
    leaseTtl: flightDefaults.leaseTtl,
    resultTtl: flightDefaults.resultTtl,
    errorTtl: flightDefaults.errorTtl,
    wait: flightDefaults.wait,
    onBusy: flightDefaults.onBusy,
    failurePolicy: transientFailurePolicy,
    onCoordinatorDown: flightDefaults.onCoordinatorDown,
  });
  const events = options.events;
  const listeners = events === undefined ? [] : typeof events === 'function' ? [events] : events;
  if (!Array.isArray(listeners) || listeners.some((listener) => typeof listener !== 'function')) {
    throw new InvalidFlightOptionError('events', events, 'a function or an array of functions');
  }
  const randomId = options.ownerId ?? randomUUID;
  if (typeof randomId !== 'function') {
    throw new InvalidFlightOptionError('ownerId', randomId, 'a function returning a unique string');
  }
  const { service } = options;
  if (service !== undefined && !isTokenService(service)) {
    throw new InvalidFlightOptionError('service', service, 'a service name without "#"');
  }
  const ownerId = service === undefined ? randomId : () => `${service}${SERVICE_MARK}${randomId()}`;
  const serviceAliases = serviceAliasesOf(options.serviceAliases);
  const backoff = options.backoff ?? {};
  const resolved: ResolvedEngineOptions = {
    flight,
    listeners: [...(listeners as readonly OncelyEventListener[])],
    ownerId,
    ...(service !== undefined && { service }),
    ...(serviceAliases !== undefined && { serviceAliases }),
    maxResultBytes: milliseconds(
      'maxResultBytes',
      options.maxResultBytes ?? flightDefaults.maxResultBytes,
      1,
      'a positive integer number of bytes',
    ),
    handoffTtl: milliseconds('handoffTtl', options.handoffTtl ?? flightDefaults.handoffTtl, 0),
    backoffInitial: milliseconds(
      'backoff.initial',
      backoff.initial ?? flightDefaults.backoffInitial,
      1,
    ),
    backoffMax: milliseconds('backoff.max', backoff.max ?? flightDefaults.backoffMax, 1),
  };
  if (resolved.backoffMax < resolved.backoffInitial) {
    throw new InvalidFlightOptionError(
      'backoff.max',
      resolved.backoffMax,
      `at least backoff.initial (${resolved.backoffInitial})`,
    );
  }
  return resolved;
}

/** Fills the fields `options` leaves out from `defaults` and validates the result. */
export function resolveFlightOptions(
  options: FlightOptions,
  defaults: ResolvedFlightOptions,
): ResolvedFlightOptions {
  const onBusy = options.onBusy ?? defaults.onBusy;
  if (onBusy !== 'wait' && onBusy !== 'reject') {
    throw new InvalidFlightOptionError('onBusy', onBusy, "'wait' or 'reject'");
  }
  const onCoordinatorDown = options.onCoordinatorDown ?? defaults.onCoordinatorDown;
  if (onCoordinatorDown !== 'open' && onCoordinatorDown !== 'closed') {
    throw new InvalidFlightOptionError(
      'onCoordinatorDown',
      onCoordinatorDown,
      "'open' or 'closed'",
    );
  }
  const failurePolicy = options.failurePolicy ?? defaults.failurePolicy;
  if (
    typeof failurePolicy?.classify !== 'function' ||
    typeof failurePolicy.serialize !== 'function' ||
    typeof failurePolicy.deserialize !== 'function'
  ) {
    throw new InvalidFlightOptionError(
      'failurePolicy',
      failurePolicy,
      'an object with classify, serialize and deserialize methods',
    );
  }
  return {
    leaseTtl: milliseconds('leaseTtl', options.leaseTtl ?? defaults.leaseTtl, 1),
    resultTtl: milliseconds('resultTtl', options.resultTtl ?? defaults.resultTtl, 0),
    errorTtl: milliseconds('errorTtl', options.errorTtl ?? defaults.errorTtl, 0),
    wait: milliseconds('wait', options.wait ?? defaults.wait, 0),
    onBusy,
    failurePolicy,
    onCoordinatorDown,
  };
}

function milliseconds(
  option: string,
  value: unknown,
  min: 0 | 1,
  expected = min === 0
    ? 'a non-negative integer number of milliseconds'
    : 'a positive integer number of milliseconds',
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidFlightOptionError(option, value, expected);
  }
  return value;
}

/** The aliases as a set, `undefined` when there are none. */
function serviceAliasesOf(aliases: unknown): ReadonlySet<string> | undefined {
  if (aliases === undefined) return undefined;
  if (!Array.isArray(aliases) || aliases.some((alias) => !isTokenService(alias))) {
    throw new InvalidFlightOptionError(
      'serviceAliases',
      aliases,
      'an array of service names without "#"',
    );
  }
  return aliases.length === 0 ? undefined : new Set(aliases as string[]);
}

function isTokenService(service: unknown): service is string {
  return typeof service === 'string' && /^[^#\s]+$/.test(service);
}
