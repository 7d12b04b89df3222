import { SetMetadata } from '@nestjs/common';
import type { IdempotentRouteOptions } from '@oncely/core';
import { checkRouteOptions } from '@oncely/core/adapter';
import { IDEMPOTENT_KEY_METADATA } from '../oncely.constants.js';
import { reportHandlerSettlement } from './handler-settlement.interceptor.js';
import { applyNestRouteOptions, type NestRouteOptions } from './nest-route-options.js';
import { routeName } from './route-name.js';

/**
 * Durable idempotency for a route: its key spec (scope, target, input, …) plus, per route, the
 * client `Idempotency-Key` (`required` by default), always combined with the scope. A retry gets
 * the stored response, a duplicate in flight 409 (or its outcome with `onBusy: 'wait'`), a
 * reused key with another payload 422, a run past `maxDuration` 503 (and frees the key). Options
 * are checked here, naming the bad one.
 */
export function IdempotentKey(options: IdempotentRouteOptions & NestRouteOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const name = routeName(target, propertyKey);
    const route = applyNestRouteOptions(name, options, target, propertyKey, descriptor);
    checkRouteOptions(name, 'idempotent', route);
    SetMetadata(IDEMPOTENT_KEY_METADATA, route)(target, propertyKey, descriptor);
    reportHandlerSettlement(target, propertyKey, descriptor);
  };
}
