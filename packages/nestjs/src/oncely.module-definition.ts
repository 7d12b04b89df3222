import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { OncelyModuleOptions } from './oncely-module-options.interface.js';

/**
 * Nest's configurable-module plumbing for `OncelyModule`: `forRoot`/`forRootAsync`, the
 * `isGlobal` extra, and `ONCELY_MODULE_OPTIONS`, the token the resolved options are provided
 * under (override it in tests to swap engines without touching the app module).
 */
export const {
  ConfigurableModuleClass: ConfigurableOncelyModule,
  /** The token `OncelyModule`'s resolved options are provided under. */
  MODULE_OPTIONS_TOKEN: ONCELY_MODULE_OPTIONS,
  OPTIONS_TYPE: ONCELY_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ONCELY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OncelyModuleOptions>({ moduleName: 'Oncely' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
