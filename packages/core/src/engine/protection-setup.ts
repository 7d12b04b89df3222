import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type { OncelyEventListener } from '../events/oncely-event.js';
import { KEY_NAME_PATTERN } from '../key/key-grammar.js';
import { MAX_TIMER_MS } from '../call/protected-route.js';
import { ReplayHeaderPolicy } from '../http/replay-header-policy.js';
import { DEFAULT_PROTECTION, type ProtectionDefaults } from '../call/route-options.js';

/**
 * The options the engine's start-up checks read, as given (not yet checked). `owner` names the
 * entry point in messages, e.g. `OncelyModule` or `createOncely()`.
 */
export interface ProtectionSetupOptions {
  readonly namespace?: unknown;
  readonly service?: unknown;
  readonly defaults?: Partial<Omit<ProtectionDefaults, 'namespace'>>;
  readonly coordinator?: unknown;
  readonly store?: unknown;
  readonly allowInMemory?: boolean;
  readonly events?: OncelyEventListener | readonly OncelyEventListener[];
}

const DEFAULT_KEYS = new Set(Object.keys(DEFAULT_PROTECTION).concat('fingerprintBits'));
const NON_NEGATIVE_INTEGERS = [
  'leaseTtl',
  'wait',
  'retention',
  'replayCacheTtl',
  'resultTtl',
  'errorTtl',
  'maxResponseBytes',
] as const;

/** The route defaults the options resolve to; throws naming the first bad option. */
export function resolveProtectionDefaults(
  owner: string,
  options: ProtectionSetupOptions,
): ProtectionDefaults {
  if (typeof options !== 'object' || options === null) {
    throw new OncelyConfigurationError(
      `${owner} needs an options object with at least a namespace.`,
    );
  }
  if (typeof options.namespace !== 'string' || !KEY_NAME_PATTERN.test(options.namespace)) {
    throw new OncelyConfigurationError(
      `${owner} option "namespace" must be a name such as "shop" (letters, digits, . _ ~ -; at most 64), got ${JSON.stringify(options.namespace)}.`,
    );
  }
  const given = options.defaults ?? {};
  for (const key of Object.keys(given)) {
    if (!DEFAULT_KEYS.has(key)) {
      throw new OncelyConfigurationError(
        `${owner} option "defaults.${key}" is unknown. Known defaults: ${[...DEFAULT_KEYS].join(', ')}.`,
      );
    }
  }
  const defaults: ProtectionDefaults = {
    ...DEFAULT_PROTECTION,
    ...given,
    namespace: options.namespace,
  };
  for (const key of NON_NEGATIVE_INTEGERS) {
    const value = defaults[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw new OncelyConfigurationError(
        `${owner} option "defaults.${key}" must be a non-negative integer (milliseconds, or bytes for maxResponseBytes), got ${JSON.stringify(value)}.`,
      );
    }
  }
  const { maxDuration } = defaults;
  if (!Number.isSafeInteger(maxDuration) || maxDuration < 1 || maxDuration > MAX_TIMER_MS) {
    throw new OncelyConfigurationError(
      `${owner} option "defaults.maxDuration" must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${JSON.stringify(maxDuration)}.`,
    );
  }
  // Fails here, with the reason, for set-cookie, content-length, hop-by-hop headers and the like.
  ReplayHeaderPolicy.create(defaults.replayHeaders);
  return defaults;
}

/**
 * In production, in-memory defaults protect one process only and lose every record on restart:
 * refuse them unless `allowInMemory` says this really is a single-process app.
 */
export function refuseInMemoryInProduction(owner: string, options: ProtectionSetupOptions): void {
  if (process.env.NODE_ENV !== 'production' || options.allowInMemory === true) return;
  const missing = [
    options.coordinator === undefined &&
      'coordinator (e.g. new RedisFlightCoordinator(redis) from @oncely/redis)',
    options.store === undefined &&
      'store (e.g. new TypeOrmIdempotencyRecordStore(dataSource) from @oncely/typeorm)',
  ].filter(Boolean);
  if (missing.length === 0) return;
  throw new OncelyConfigurationError(
    `${owner} refuses to start in production on in-memory defaults: they protect one process only and lose every record on restart. Register ${missing.join(' and ')}, or set allowInMemory: true if this really is a single-process app.`,
  );
}

/** The `events` option as a list; throws unless every listener is a function. */
export function eventListenersOf(
  owner: string,
  events: ProtectionSetupOptions['events'],
): OncelyEventListener[] {
  if (events === undefined) return [];
  const list = typeof events === 'function' ? [events] : [...events];
  if (list.some((listener) => typeof listener !== 'function')) {
    throw new OncelyConfigurationError(
      `${owner} option "events" must be a function or an array of functions.`,
    );
  }
  return list;
}
