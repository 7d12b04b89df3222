import type { ConfigurableModuleAsyncOptions, ExecutionContext } from '@nestjs/common';
import type { KeyContext, OncelyEngineOptions } from '@oncely/core';
import type { ClassTransformOptions } from 'class-transformer';
import type { ValidatorOptions } from 'class-validator';

/**
 * How the interceptor validates and transforms the `@Body()` DTO before any key, lock or record
 * exists. Without this option it uses the settings of the app's own global `ValidationPipe`
 * (`useGlobalPipes` or `APP_PIPE`), else class-validator's defaults; `false` leaves the body as
 * received.
 */
export interface OncelyValidationOptions {
  /** class-validator's options for `validate` (e.g. `whitelist`, `forbidNonWhitelisted`). */
  readonly validator?: ValidatorOptions;
  /** class-transformer's options for `plainToInstance` (e.g. `enableImplicitConversion`). */
  readonly transformer?: ClassTransformOptions;
}

/** How messages consumed from RabbitMQ (`Transport.RMQ`) are acknowledged; see docs/messaging.md. */
export interface OncelyRmqOptions {
  /**
   * The `noAck` of the app's `Transport.RMQ` server; `true` (Nest's default) when left out, and
   * oncely settles nothing. With `false` (manual acknowledgement), oncely settles every message
   * of a handler under `@IdempotentKey` or `@SingleFlight`, once, when its outcome is final, and
   * the handler must not: ack once its record is complete or replayed; nack with requeue when a
   * later delivery may succeed (the key still in flight after the wait, a backend down, the
   * handler threw); reject without requeue (dead-letter) a payload mismatch or a message whose key
   * cannot be built. Other handlers settle their own messages.
   */
  readonly noAck?: boolean;
}

/**
 * `OncelyModule.forRoot` options: core's engine options (`namespace`, `coordinator` and `store`
 * instances, `defaults`, `events`, security) plus what only Nest has.
 */
export interface OncelyModuleOptions extends Omit<OncelyEngineOptions, 'owner'> {
  /** How the `@Body()` DTO is validated before keys are built; `false` leaves it as received. */
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
  /**
   * Most standbys of refused provider-method calls kept at once (default 10 000): each holds its
   * call's arguments until the lease it waits for ends. A refusal past the bound gets no standby
   * (a warning says so), and that call is not retried by this app.
   */
  readonly maxStandbys?: number;
  /** RabbitMQ consumers with manual acknowledgement: `{ noAck: false }`, as on the server. */
  readonly rmq?: OncelyRmqOptions;
}

/**
 * The options that decide what the app's routes claim. `OncelyModule.forRootAsync` takes them
 * next to its factory, so `oncely registry` reads them without running the factory (which may
 * open connections).
 */
export type OncelyDeclaredOptions = Pick<OncelyModuleOptions, 'namespace' | 'service' | 'defaults'>;

/** What a `forRootAsync` factory returns: every option, or all but those given to `forRootAsync`. */
export type OncelyModuleFactoryOptions = Omit<OncelyModuleOptions, 'namespace'> & {
  /** Left out when given to `forRootAsync` itself; equal to it when given in both places. */
  readonly namespace?: string;
};

/**
 * `OncelyModule.forRootAsync` options: a factory (`useFactory`, `useClass`, `useExisting`) for the
 * options, and, next to it, those that decide the app's claims. Give `namespace` (and `service`,
 * `defaults` when the app sets them) here rather than in the factory, so `oncely registry export`
 * can read them; an option given in both places must be equal.
 */
export interface OncelyModuleAsyncOptions
  extends
    ConfigurableModuleAsyncOptions<OncelyModuleFactoryOptions, 'create'>,
    Partial<OncelyDeclaredOptions> {
  /** Registers the module globally. */
  readonly isGlobal?: boolean;
}
