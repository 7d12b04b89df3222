import {
  Inject,
  Logger,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule, ModuleRef } from '@nestjs/core';
import { ProtectedHandlerDiscovery } from './discovery/protected-handler.discovery.js';
import { OncelyGraphQLPlugin } from './graphql/oncely-graphql.plugin.js';
import { appValidationOptions } from './http/app-validation-options.js';
import { OncelyExceptionFilter } from './http/oncely-exception.filter.js';
import { ONCELY_DECLARED_OPTIONS, ONCELY_RUNTIME } from './oncely.constants.js';
import { declaredOptionsOf, withDeclaredOptions } from './oncely.declared-options.js';
import { OncelyInterceptor } from './oncely.interceptor.js';
import {
  ConfigurableOncelyModule,
  ONCELY_ASYNC_OPTIONS_TYPE,
  ONCELY_MODULE_OPTIONS,
} from './oncely.module-definition.js';
import { OncelyRuntime } from './oncely.runtime.js';
import { refuseUnknownAsyncOptions } from './module-option-names.js';
import type {
  OncelyDeclaredOptions,
  OncelyModuleAsyncOptions,
  OncelyModuleFactoryOptions,
} from './oncely-module-options.interface.js';

/**
 * `OncelyModule.forRoot({ namespace, coordinator, store, … })` or `forRootAsync(…)`; pass
 * `isGlobal: true` to use it from every module. `forRootAsync` takes `namespace`, `service` and
 * `defaults` next to its factory, where `oncely registry` reads them without running it. At
 * start-up it runs the store's start-up check (a missing or outdated record table fails the boot)
 * and finds every protected handler (one pass over controllers and providers); at bootstrap it
 * registers the app's claims where its records go (`claims`, `onForeignClaim`), renewed until
 * shutdown. It registers one global interceptor (inert on
 * handlers without oncely decorators) and the filter writing oncely's own responses. On
 * shutdown it first cancels the standbys of refused provider-method calls (before any module
 * closes the connections they would use), then closes the coordinator and store it was given
 * (never the clients they were given).
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: ONCELY_RUNTIME,
      // Started here, before any handler can run: a store that refuses to start (a record
      // table not migrated) fails the boot rather than every request.
      useFactory: async (
        options: OncelyModuleFactoryOptions,
        moduleRef: ModuleRef,
        declared: Partial<OncelyDeclaredOptions> | undefined,
      ) => {
        const runtime = OncelyRuntime.create(
          withDeclaredOptions(declared, options),
          appValidationOptions(moduleRef),
        );
        await runtime.start();
        return runtime;
      },
      inject: [
        ONCELY_MODULE_OPTIONS,
        ModuleRef,
        { token: ONCELY_DECLARED_OPTIONS, optional: true },
      ],
    },
    ProtectedHandlerDiscovery,
    { provide: APP_INTERCEPTOR, useClass: OncelyInterceptor },
    { provide: APP_FILTER, useClass: OncelyExceptionFilter },
    // Found by Nest's Apollo driver like any `@Plugin()` provider; inert without GraphQL.
    OncelyGraphQLPlugin,
  ],
})
export class OncelyModule
  extends ConfigurableOncelyModule
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  /**
   * Nest builds the module; apps import it with `forRoot` or `forRootAsync`.
   *
   * @internal
   */
  constructor(@Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime) {
    super();
  }

  /**
   * Options from a factory (`useFactory` with `inject`, `useClass`, `useExisting`), with
   * `namespace`, `service` and `defaults` given next to it: those decide what the app claims, and
   * `oncely registry` reads them from here without running the factory.
   */
  static override forRootAsync(options: OncelyModuleAsyncOptions): DynamicModule {
    refuseUnknownAsyncOptions(options);
    const { namespace, service, defaults, ...factory } = options;
    const definition = super.forRootAsync(factory as typeof ONCELY_ASYNC_OPTIONS_TYPE);
    return {
      ...definition,
      providers: [
        ...(definition.providers ?? []),
        {
          provide: ONCELY_DECLARED_OPTIONS,
          useValue: declaredOptionsOf({ namespace, service, defaults }),
        },
      ],
    };
  }

  /**
   * Nest's bootstrap hook, once every route is found: registers the app's claims where its
   * records go and renews them until shutdown (the `claims` option). Another service's live claim
   * on one of its operations fails the boot with `ForeignClaimError` (`onForeignClaim: 'fail'`),
   * or is logged as a warning (`'warn'`).
   */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.runtime.registerClaims();
    } catch (error) {
      // Nest's exception handler logs a failure while the app is created (a record table not
      // migrated) but not one in a lifecycle hook: logged here the same way, so both boot
      // failures read alike, then rethrown, so `init()` / `listen()` reject and the boot stops.
      new Logger('ExceptionHandler').error(error);
      throw error;
    }
  }

  /**
   * Nest's shutdown hook: cancels the standbys and withdraws the app's claims while the
   * connections they use are still open.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.runtime.stopStandbys(), this.runtime.withdrawClaims()]);
  }

  /**
   * Nest's shutdown hook: withdraws this instance's claims (other replicas keep theirs), then
   * closes the coordinator and store oncely was given.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.runtime.close();
  }
}
