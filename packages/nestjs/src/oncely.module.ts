import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule, ModuleRef } from '@nestjs/core';
import { appValidationOptions } from './app-validation-pipe.js';
import { ONCELY_RUNTIME } from './oncely.constants.js';
import { OncelyInterceptor } from './oncely.interceptor.js';
import { ConfigurableOncelyModule, ONCELY_MODULE_OPTIONS } from './oncely.module-definition.js';
import { OncelyRuntime } from './oncely.runtime.js';
import type { OncelyModuleOptions } from './oncely-module-options.interface.js';
import { OncelyExceptionFilter } from './oncely-exception.filter.js';
import { OncelyRouteRegistry } from './oncely-route.registry.js';
import { OncelyHandlerExplorer } from './oncely-handler.explorer.js';

/**
 * `OncelyModule.forRoot({ namespace, coordinator, store, … })` or `forRootAsync(…)`; pass
 * `isGlobal: true` to use it from every module. Registers one global interceptor (inert on routes
 * without oncely decorators) and the filter writing oncely's own responses.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: ONCELY_RUNTIME,
      useFactory: (options: OncelyModuleOptions, moduleRef: ModuleRef) =>
        OncelyRuntime.create(options, appValidationOptions(moduleRef)),
      inject: [ONCELY_MODULE_OPTIONS, ModuleRef],
    },
    OncelyRouteRegistry,
    OncelyHandlerExplorer,
    { provide: APP_INTERCEPTOR, useClass: OncelyInterceptor },
    { provide: APP_FILTER, useClass: OncelyExceptionFilter },
  ],
  exports: [ONCELY_RUNTIME],
})
export class OncelyModule extends ConfigurableOncelyModule implements OnApplicationShutdown {
  constructor(@Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime) {
    super();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime.close();
  }
}
