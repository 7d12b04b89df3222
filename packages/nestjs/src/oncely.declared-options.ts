import { OncelyConfigurationError } from '@oncely/core';
import { isDeepStrictEqual } from 'node:util';
import type {
  OncelyDeclaredOptions,
  OncelyModuleFactoryOptions,
  OncelyModuleOptions,
} from './oncely-module-options.interface.js';

/** The keys `forRootAsync` takes next to its factory. */
export const DECLARED_OPTION_KEYS = ['namespace', 'service', 'defaults'] as const;

/** The declared options among `options`, without those left out. */
export function declaredOptionsOf(
  options: Partial<OncelyDeclaredOptions>,
): Partial<OncelyDeclaredOptions> {
  return Object.fromEntries(
    DECLARED_OPTION_KEYS.filter((key) => options[key] !== undefined).map((key) => [
      key,
      options[key],
    ]),
  );
}

/**
 * The module's options: the factory's, with those given to `forRootAsync` next to it. An option
 * given in both places with different values is refused: the registry would show one and the app
 * run with the other.
 */
export function withDeclaredOptions(
  declared: Partial<OncelyDeclaredOptions> | undefined,
  options: OncelyModuleFactoryOptions,
): OncelyModuleOptions {
  const given = declaredOptionsOf(declared ?? {});
  for (const key of DECLARED_OPTION_KEYS) {
    const made = (options as Partial<OncelyDeclaredOptions> | undefined)?.[key];
    if (key in given && made !== undefined && !isDeepStrictEqual(made, given[key])) {
      throw new OncelyConfigurationError(
        `OncelyModule option "${key}" is given to forRootAsync and, with another value, by its options factory. Give it in one place: next to useFactory, where oncely registry reads it.`,
      );
    }
  }
  return { ...options, ...given } as OncelyModuleOptions;
}
