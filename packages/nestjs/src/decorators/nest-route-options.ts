import { SetMetadata } from '@nestjs/common';
import { RouteOptionsError } from '@oncely/core';
import { KEY_AFTER_INTERCEPTORS_METADATA } from '../oncely.constants.js';

/** Options `@IdempotentKey` and `@SingleFlight` take in Nest, beside those of every framework. */
export interface NestRouteOptions {
  /**
   * Build the keys after the route's own interceptors ran, from the body one of them produced:
   * a custom upload or decoding interceptor. multer's interceptors (`FileInterceptor`,
   * `FilesInterceptor`, `FileFieldsInterceptor`, `AnyFilesInterceptor`, `NoFilesInterceptor`)
   * are recognised without it. Default `false`: keys are built before any route interceptor, so
   * a duplicate is turned away before they run.
   */
  readonly keyAfterInterceptors?: boolean;
}

/**
 * Takes the Nest-only options off a decorator's options, checks them and records them on the
 * handler; what is left goes to core's route options.
 */
export function applyNestRouteOptions<T extends object>(
  route: string,
  options: T & NestRouteOptions,
  target: object,
  propertyKey: string | symbol,
  descriptor: PropertyDescriptor,
): T {
  if (!('keyAfterInterceptors' in options)) return options;
  const { keyAfterInterceptors, ...rest } = options;
  if (typeof keyAfterInterceptors !== 'boolean') {
    throw new RouteOptionsError(route, 'keyAfterInterceptors', 'must be true or false.');
  }
  if (keyAfterInterceptors) {
    SetMetadata(KEY_AFTER_INTERCEPTORS_METADATA, true)(target, propertyKey, descriptor);
  }
  return rest as unknown as T;
}
