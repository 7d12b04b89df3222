import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  OncelyConfigurationError,
  OperationRegistry,
  ProtectedCallExecutor,
  createProtectionEngines,
  eventListenersOf,
  isTransactionalRecordStore,
  refuseInMemoryInProduction,
  resolveProtectionDefaults,
  secureEngines,
  type FlightCoordinator,
  type IdempotencyRecordStore,
  type ProtectionDefaults,
} from '@oncely/core';
import type {
  OncelyModuleOptions,
  OncelyValidationOptions,
} from './oncely-module-options.interface.js';

const OWNER = 'OncelyModule';

interface Closable {
  close(): Promise<void>;
}

/**
 * Everything the module resolved from its options, once, at start-up: the engines (loading
 * `@oncely/redis` / `@oncely/typeorm` only when the options ask for them), the route defaults,
 * the validation options and the operation registry.
 */
export class OncelyRuntime {
  readonly registry = new OperationRegistry();

  private constructor(
    readonly executor: ProtectedCallExecutor,
    readonly defaults: ProtectionDefaults,
    /** The module's `validation` option as given; `undefined` follows the app. */
    private readonly validationOption: OncelyValidationOptions | false | undefined,
    private readonly appValidation: () => OncelyValidationOptions | undefined,
    readonly coordinator: FlightCoordinator,
    readonly store: IdempotencyRecordStore,
    private readonly owned: readonly Closable[],
    /** The module's `keyContext` option: where keys read the request context from. */
    readonly keyContext?: OncelyModuleOptions['keyContext'],
  ) {}

  /**
   * The options a body is validated with, `false` for none: the module's `validation` option when
   * given, else the settings of the app's own global `ValidationPipe` (so a field the app strips
   * never changes a fingerprint), else class-validator's defaults. Resolved on each read:
   * `useGlobalPipes` may run after the module started.
   */
  get validation(): OncelyValidationOptions | false {
    return this.validationOption ?? this.appValidation() ?? {};
  }

  /** Whether `transactional: true` routes can run on the configured store. */
  get supportsTransactions(): boolean {
    return isTransactionalRecordStore(this.store);
  }

  /**
   * @param appValidation reads the app's global `ValidationPipe` settings (`appValidationOptions`);
   *   without it, bodies are validated with class-validator's defaults unless `validation` says.
   */
  static async create(
    options: OncelyModuleOptions,
    appValidation: () => OncelyValidationOptions | undefined = () => undefined,
  ): Promise<OncelyRuntime> {
    const defaults = resolveProtectionDefaults(OWNER, options);
    if (options.keyContext !== undefined && typeof options.keyContext !== 'function') {
      throw new OncelyConfigurationError(
        'OncelyModule option "keyContext" must be a function (context, base) => KeyContext.',
      );
    }
    refuseInMemoryInProduction(OWNER, options, {
      coordinator: 'e.g. coordinator: { redis: redisClient }',
      store: 'e.g. store: dataSource, a TypeORM DataSource',
    });
    const owned: Closable[] = [];
    const { coordinator, store } = secureEngines(
      OWNER,
      {
        coordinator: await resolveCoordinator(options.coordinator, owned),
        store: await resolveStore(options.store, owned),
      },
      options,
    );
    const events = eventListenersOf(OWNER, options.events);
    const executor = new ProtectedCallExecutor(
      createProtectionEngines({
        coordinator,
        store,
        events,
        maxResponseBytes: defaults.maxResponseBytes,
      }),
    );
    return new OncelyRuntime(
      executor,
      defaults,
      options.validation,
      appValidation,
      coordinator,
      store,
      owned,
      options.keyContext,
    );
  }

  /** Closes what the module created (never clients or stores passed in by the app). */
  async close(): Promise<void> {
    await Promise.allSettled(this.owned.map((resource) => resource.close()));
  }
}

async function resolveCoordinator(
  option: OncelyModuleOptions['coordinator'],
  owned: Closable[],
): Promise<FlightCoordinator> {
  if (option === undefined) {
    const coordinator = new InMemoryFlightCoordinator();
    owned.push(coordinator);
    return coordinator;
  }
  if (isCoordinator(option)) return option;
  const connection = redisConnectionOf(option);
  if (connection === undefined) {
    throw new OncelyConfigurationError(
      'OncelyModule option "coordinator" must be a FlightCoordinator, an ioredis client, or { redis: client | RedisOptions, keyPrefix?, commandTimeout? }.',
    );
  }
  const redis = await loadOptional('@oncely/redis', 'coordinator', 'ioredis');
  const coordinator = new redis.RedisFlightCoordinator(connection.redis, {
    ...(connection.keyPrefix !== undefined && { keyPrefix: connection.keyPrefix }),
    ...(connection.commandTimeout !== undefined && { commandTimeout: connection.commandTimeout }),
  }) as FlightCoordinator;
  owned.push(coordinator);
  return coordinator;
}

async function resolveStore(
  option: OncelyModuleOptions['store'],
  owned: Closable[],
): Promise<IdempotencyRecordStore> {
  if (option === undefined) return new InMemoryIdempotencyRecordStore();
  if (isRecordStore(option)) return option;
  if (isDataSource(option)) {
    const typeorm = await loadOptional('@oncely/typeorm', 'store', 'typeorm');
    return new typeorm.TypeOrmIdempotencyRecordStore(option) as IdempotencyRecordStore;
  }
  const connection = redisConnectionOf(option);
  if (connection === undefined) {
    throw new OncelyConfigurationError(
      'OncelyModule option "store" must be an IdempotencyRecordStore, a TypeORM DataSource, or { redis: client | RedisOptions, keyPrefix? }.',
    );
  }
  const redis = await loadOptional('@oncely/redis', 'store', 'ioredis');
  const store = new redis.RedisIdempotencyRecordStore(connection.redis, {
    ...(connection.keyPrefix !== undefined && { keyPrefix: connection.keyPrefix }),
  }) as IdempotencyRecordStore & Closable;
  owned.push(store);
  return store;
}

function isCoordinator(value: object): value is FlightCoordinator {
  const candidate = value as Partial<FlightCoordinator>;
  return typeof candidate.acquire === 'function' && typeof candidate.waitForNotice === 'function';
}

function isRecordStore(value: object): value is IdempotencyRecordStore {
  const candidate = value as Partial<IdempotencyRecordStore>;
  return typeof candidate.begin === 'function' && typeof candidate.complete === 'function';
}

/** A TypeORM `DataSource`, recognised by shape so that typeorm is never imported here. */
function isDataSource(value: object): boolean {
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.createQueryRunner === 'function' &&
    typeof candidate.transaction === 'function' &&
    typeof candidate.manager === 'object'
  );
}

function isRedisClient(value: object): boolean {
  const candidate = value as Record<string, unknown>;
  return typeof candidate.defineCommand === 'function' && typeof candidate.duplicate === 'function';
}

function redisConnectionOf(
  value: object,
): { redis: unknown; keyPrefix?: string; commandTimeout?: number } | undefined {
  if (isRedisClient(value)) return { redis: value };
  const candidate = value as { redis?: unknown; keyPrefix?: string; commandTimeout?: number };
  if (typeof candidate.redis === 'object' && candidate.redis !== null) {
    return { ...candidate, redis: candidate.redis };
  }
  return undefined;
}

interface OptionalAdapters {
  RedisFlightCoordinator: new (connection: unknown, options: object) => unknown;
  RedisIdempotencyRecordStore: new (connection: unknown, options: object) => unknown;
  TypeOrmIdempotencyRecordStore: new (dataSource: unknown) => unknown;
}

/** Loads an adapter package on demand, so `@oncely/nestjs` depends on neither. */
async function loadOptional(
  specifier: '@oncely/redis' | '@oncely/typeorm',
  option: string,
  driver: string,
): Promise<OptionalAdapters> {
  try {
    return (await import(specifier)) as OptionalAdapters;
  } catch (error) {
    throw new OncelyConfigurationError(
      `OncelyModule option "${option}" needs ${specifier}, which could not be loaded. Install it next to ${driver} (npm install ${specifier} ${driver}).`,
      { cause: error },
    );
  }
}
