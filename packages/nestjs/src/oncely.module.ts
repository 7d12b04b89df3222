import {
  Inject,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule, ModuleRef } from '@nestjs/core';
import { ProtectedHandlerDiscovery } from './discovery/protected-handler.discovery.js';
import { OncelyGraphQLPlugin } from './graphql/oncely-graphql.plugin.js';
import { appValidationOptions } from './http/app-validation-options.js';
import { OncelyExceptionFilter } from './http/oncely-exception.filter.js';
import { ONCELY_RUNTIME } from './oncely.constants.js';
import { OncelyInterceptor } from './oncely.interceptor.js';
import { ConfigurableOncelyModule, ONCELY_MODULE_OPTIONS } from './oncely.module-definition.js';
import { OncelyRuntime } from './oncely.runtime.js';
import type { OncelyModuleOptions } from './oncely-module-options.interface.js';

/**
 * `OncelyModule.forRoot({ namespace, coordinator, store, … })` or `forRootAsync(…)`; pass
 * `isGlobal: true` to use it from every module. At start-up it runs the store's start-up check
 * (a missing or outdated record table fails the boot) and finds every protected handler
 * (one pass over controllers and providers); it registers one global interceptor (inert on
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
      useFactory: async (options: OncelyModuleOptions, moduleRef: ModuleRef) => {
        const runtime = OncelyRuntime.create(options, appValidationOptions(moduleRef));
        await runtime.start();
        return runtime;
      },
      inject: [ONCELY_MODULE_OPTIONS, ModuleRef],
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
  implements BeforeApplicationShutdown, OnApplicationShutdown
{
  /**
   * Nest builds the module; apps import it with `forRoot` or `forRootAsync`.
   *
   * @internal
   */
  constructor(@Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime) {
    super();
  }

  /** Nest's shutdown hook: cancels the standbys while the connections they use are still open. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.runtime.stopStandbys();
  }

  /** Nest's shutdown hook: closes the coordinator and store oncely was given. */
  async onApplicationShutdown(): Promise<void> {
    await this.runtime.close();
  }
}
