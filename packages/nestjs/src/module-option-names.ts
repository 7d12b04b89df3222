import type { ConfigurableModuleAsyncOptions } from '@nestjs/common';
import { OncelyConfigurationError } from '@oncely/core';
import { ENGINE_OPTION_NAMES, refuseUnknownOptions } from '@oncely/core/adapter';
import type { OncelyEngineOptions } from '@oncely/core';
import type {
  OncelyModuleAsyncOptions,
  OncelyModuleOptions,
} from './oncely-module-options.interface.js';

/** The engine's options and the module's own, as `forRoot` and a `forRootAsync` factory take them. */
export const MODULE_OPTION_NAMES: ReadonlySet<string> = new Set([
  ...ENGINE_OPTION_NAMES,
  ...Object.keys({
    validation: true,
    keyContext: true,
    maxStandbys: true,
    rmq: true,
  } satisfies Record<Exclude<keyof OncelyModuleOptions, keyof OncelyEngineOptions>, true>),
]);

/** What `forRootAsync` takes: Nest's async options, `isGlobal`, and the options it declares. */
const ASYNC_OPTION_NAMES: ReadonlySet<string> = new Set(
  Object.keys({
    imports: true,
    inject: true,
    useFactory: true,
    useClass: true,
    useExisting: true,
    provideInjectionTokensFrom: true,
    isGlobal: true,
    namespace: true,
    service: true,
    defaults: true,
  } satisfies Record<
    keyof OncelyModuleAsyncOptions | keyof ConfigurableModuleAsyncOptions<unknown>,
    true
  >),
);

/**
 * Refuses what `forRootAsync` would leave unread: a module option that belongs in the factory's
 * result (said so), or a name that is no option at all.
 */
export function refuseUnknownAsyncOptions(options: OncelyModuleAsyncOptions): void {
  const owner = 'OncelyModule.forRootAsync';
  for (const name of Object.keys(options ?? {})) {
    if (!ASYNC_OPTION_NAMES.has(name) && MODULE_OPTION_NAMES.has(name)) {
      throw new OncelyConfigurationError(
        `${owner} reads "${name}" from what its options factory returns, not from next to it: return it from useFactory (or the class's create()).`,
      );
    }
  }
  refuseUnknownOptions(owner, options ?? {}, ASYNC_OPTION_NAMES);
}
