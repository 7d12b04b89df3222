import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { OncelyModuleOptions } from './oncely-module-options.interface.js';

export const {
  ConfigurableModuleClass: ConfigurableOncelyModule,
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
