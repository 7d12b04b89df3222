import { Logger } from '@nestjs/common';
import {
  createOncelyEngine,
  type OncelyEngine,
  type ProtectedRouteDeclaration,
  type RegistryClaim,
} from '@oncely/core';
import {
  closeGivenAdaptersOnError,
  positiveIntegerOption,
  refuseUnknownOptions,
  requireFunction,
  type ProtectedCallExecutor,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import { DEFAULT_MAX_STANDBYS, StandbyRegistry } from './method/standby.registry.js';
import { MODULE_OPTION_NAMES } from './module-option-names.js';
import { settlesRmqMessages } from './rpc/rmq-message.settlement.js';
import type {
  OncelyModuleOptions,
  OncelyValidationOptions,
} from './oncely-module-options.interface.js';

const OWNER = 'OncelyModule';

/**
 * The module's options resolved once, at start-up: core's engine, built from the shared options,
 * and the options only Nest has (`keyContext`, `validation`, `maxStandbys`, `rmq`).
 */
export class OncelyRuntime {
  private constructor(
    private readonly engine: OncelyEngine,
    /** The standbys of this app's refused provider-method calls. */
    readonly standbys: StandbyRegistry,
    /** The module's `validation` option as given; `undefined` follows the app. */
    private readonly validationOption: OncelyValidationOptions | false | undefined,
    private readonly appValidation: () => OncelyValidationOptions | undefined,
    /** Whether oncely acks, nacks or rejects RabbitMQ messages (`rmq: { noAck: false }`). */
    readonly settlesRmqMessages: boolean,
    /** The module's `keyContext` option: where keys read the request context from. */
    readonly keyContext?: OncelyModuleOptions['keyContext'],
  ) {}

  /**
   * @param appValidation reads the app's global `ValidationPipe` settings (`appValidationOptions`);
   *   without it, bodies are validated with class-validator's defaults unless `validation` says.
   */
  static create(
    options: OncelyModuleOptions,
    appValidation: () => OncelyValidationOptions | undefined = () => undefined,
  ): OncelyRuntime {
    const { validation, keyContext, maxStandbys, rmq, ...engineOptions } = options;
    // Checked first: a refused option must not leave an engine behind, open (nor the adapters
    // handed over, which the engine would have closed).
    const { settlesRmq, standbys } = closeGivenAdaptersOnError(options, () => {
      refuseUnknownOptions(OWNER, options ?? {}, MODULE_OPTION_NAMES);
      requireFunction(OWNER, 'keyContext', keyContext, '(context, base) => KeyContext');
      return {
        settlesRmq: settlesRmqMessages(OWNER, rmq),
        standbys: new StandbyRegistry(
          positiveIntegerOption(OWNER, 'maxStandbys', maxStandbys, DEFAULT_MAX_STANDBYS),
        ),
      };
    });
    const engine = createOncelyEngine({
      ...engineOptions,
      // Nest's own logger by default, so oncely's lines follow the app's logger settings.
      logger: engineOptions.logger ?? new Logger(OWNER),
      owner: OWNER,
    });
    return new OncelyRuntime(engine, standbys, validation, appValidation, settlesRmq, keyContext);
  }

  get executor(): ProtectedCallExecutor {
    return this.engine.executor;
  }

  /**
   * The options a body is validated with, `false` for none: the module's `validation` option when
   * given, else the settings of the app's own global `ValidationPipe` (so a field the app strips
   * never changes a fingerprint), else class-validator's defaults. Resolved on each read:
   * `useGlobalPipes` may run after the module started.
   */
  get validation(): OncelyValidationOptions | false {
    return this.validationOption ?? this.appValidation() ?? {};
  }

  /** Resolves a handler's declared options and registers its claims (the engine's checks). */
  defineRoute(name: string, declared: ProtectedRouteDeclaration): ProtectedRoute {
    return this.engine.defineRoute(name, declared);
  }

  /** The service owning the app's claims: the `service` option, or its default. */
  get service(): string {
    return this.engine.service;
  }

  /** Other names the service accepts as its own: the `serviceAliases` option, checked. */
  get serviceAliases(): readonly string[] {
    return this.engine.serviceAliases;
  }

  /** Every claim of the routes defined so far, as `oncely registry export` lists them. */
  claims(): RegistryClaim[] {
    return this.engine.claims();
  }

  /**
   * Runs the engine's start-up checks and the store's background work (`OncelyEngine.start`);
   * the module awaits it while it is created, so a store that cannot work fails the boot.
   */
  start(): Promise<void> {
    return this.engine.start();
  }

  /**
   * Registers the app's claims where its records go and renews them until `close()`
   * (`OncelyEngine.registerClaims`): rejects with `ForeignClaimError` when another service holds
   * one of its operations and `onForeignClaim` is `'fail'`. The module calls it at bootstrap,
   * once every route is found.
   */
  registerClaims(): Promise<void> {
    return this.engine.registerClaims();
  }

  /** Stops renewing the app's claims and withdraws them (`OncelyEngine.withdrawClaims`). */
  withdrawClaims(): Promise<void> {
    return this.engine.withdrawClaims();
  }

  /**
   * Cancels the standbys of refused provider-method calls (`StandbyRegistry`) and waits for those
   * calling right now; none starts afterwards. Called before the app closes its connections.
   */
  stopStandbys(): Promise<void> {
    return this.standbys.close();
  }

  /**
   * Stops the standbys, then closes the engine: its coordinator and store, never the clients the
   * app gave them.
   */
  async close(): Promise<void> {
    await this.stopStandbys();
    await this.engine.close();
  }
}
