import type { ExecutionContext } from '@nestjs/common';
import type {
  FlightCoordinator,
  KeyContext,
  IdempotencyRecordStore,
  OncelyEventListener,
  ProtectionDefaults,
  SecurityOptions,
} from '@oncely/core';
import type { ClassTransformOptions } from 'class-transformer';
import type { ValidatorOptions } from 'class-validator';

/**
 * A Redis connection for `@oncely/redis` (loaded only when used): an ioredis `Redis`/`Cluster`
 * you own (never closed by oncely), or options for a client oncely creates and closes.
 */
export interface RedisConnectionOption {
  readonly redis: unknown;
  /** Prefix of every Redis key oncely writes; default `oncely:`. */
  readonly keyPrefix?: string;
  /** Longest wait for one Redis round trip (ms) before the coordinator counts as down. */
  readonly commandTimeout?: number;
}

/**
 * How the interceptor validates and transforms the `@Body()` DTO before any key, lock or record
 * exists. Without this option it uses the settings of the app's own global `ValidationPipe`
 * (`useGlobalPipes` or `APP_PIPE`), else class-validator's defaults; `false` leaves the body as
 * received.
 */
export interface OncelyValidationOptions {
  readonly validator?: ValidatorOptions;
  readonly transformer?: ClassTransformOptions;
}

export interface OncelyModuleOptions extends SecurityOptions {
  /** Who owns the key space: one per service or domain. */
  readonly namespace: string;
  /**
   * SingleFlight coordinator: a `FlightCoordinator`, an ioredis client, or `{ redis, … }`.
   * Default: the in-memory coordinator (one process only).
   */
  readonly coordinator?: FlightCoordinator | RedisConnectionOption | object;
  /**
   * Durable idempotency records: an `IdempotencyRecordStore`, a TypeORM `DataSource`
   * (`@oncely/typeorm`, supports `transactional`), or `{ redis, … }` (`@oncely/redis`).
   * Default: the in-memory store (one process, lost on restart).
   */
  readonly store?: IdempotencyRecordStore | RedisConnectionOption | object;
  /** Lets `NODE_ENV=production` start on the in-memory defaults; say so only for one-node apps. */
  readonly allowInMemory?: boolean;
  /**
   * Defaults every route may override: TTLs, wait, fingerprint bits, header name, `maxDuration`
   * (how long a handler may hold its key, default 300 000 ms), …
   */
  readonly defaults?: Partial<Omit<ProtectionDefaults, 'namespace'>>;
  readonly validation?: OncelyValidationOptions | false;
  /**
   * Where keys read the request context from, for apps whose principal is not `request.user`
   * (a tenant resolved by middleware, `nestjs-cls`, …). Gets the default context — `body` (the
   * validated DTO), `params`, `query`, `headers` and `user` of the HTTP request — and returns the
   * one keys are built from, e.g. `(ctx, base) => ({ ...base, user: cls.get('principal') })`.
   */
  readonly keyContext?: (
    context: ExecutionContext,
    base: KeyContext,
  ) => KeyContext | Promise<KeyContext>;
  /** Receive every decision; a throwing listener is ignored. */
  readonly events?: OncelyEventListener | readonly OncelyEventListener[];
}
