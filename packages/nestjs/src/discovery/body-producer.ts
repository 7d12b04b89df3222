import type { Type } from '@nestjs/common';
import { INTERCEPTORS_METADATA, SELF_DECLARED_DEPS_METADATA } from '@nestjs/common/constants.js';
import { OncelyConfigurationError } from '@oncely/core';
import { isHandlerSettlementInterceptor } from '../decorators/handler-settlement.interceptor.js';
import { KEY_AFTER_INTERCEPTORS_METADATA } from '../oncely.constants.js';

// What every multer interceptor of `@nestjs/platform-express` injects (Nest 10 to 12); the
// classes themselves are mixins with generated names, so this is how they are told apart.
const MULTER_MODULE_OPTIONS = 'MULTER_MODULE_OPTIONS';

/**
 * Whether the route's keys must wait for its own interceptors: a multer interceptor on the route
 * or its controller parses the multipart body only when it runs, and a route may declare a body
 * producer of its own (`keyAfterInterceptors: true`). Such a route's keys are built next to the
 * handler, so the route-level interceptors must all come before oncely's: decorators apply
 * bottom-up, so `@IdempotentKey`/`@SingleFlight` is written above `@UseInterceptors(...)`.
 */
export function keysAfterInterceptors(controller: Type, handler: object, name: string): boolean {
  const onRoute = interceptorsOf(handler);
  const declared = Reflect.getMetadata(KEY_AFTER_INTERCEPTORS_METADATA, handler) === true;
  if (!declared && ![...interceptorsOf(controller), ...onRoute].some(isMulterInterceptor)) {
    return false;
  }
  if (!isHandlerSettlementInterceptor(onRoute.at(-1))) {
    throw new OncelyConfigurationError(
      `${name} builds its keys from a body its own interceptors produce, but an interceptor on the route runs after oncely's: write @IdempotentKey()/@SingleFlight() above @UseInterceptors(...) (decorators apply from the bottom up), so the upload is parsed before the key is built.`,
    );
  }
  return true;
}

function interceptorsOf(target: object): readonly unknown[] {
  return (Reflect.getMetadata(INTERCEPTORS_METADATA, target) ?? []) as unknown[];
}

function isMulterInterceptor(interceptor: unknown): boolean {
  const type =
    typeof interceptor === 'function'
      ? interceptor
      : (interceptor as { constructor?: unknown } | null)?.constructor;
  if (typeof type !== 'function') return false;
  const injected = (Reflect.getMetadata(SELF_DECLARED_DEPS_METADATA, type) ?? []) as ReadonlyArray<{
    param?: unknown;
  }>;
  return injected.some((dependency) => dependency.param === MULTER_MODULE_OPTIONS);
}
