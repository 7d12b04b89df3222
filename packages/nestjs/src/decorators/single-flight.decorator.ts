import { SetMetadata } from '@nestjs/common';
import type { SingleFlightRouteOptions } from '@oncely/core';
import { checkRouteOptions } from '@oncely/core/adapter';
import { SINGLE_FLIGHT_METADATA } from '../oncely.constants.js';
import { reportHandlerSettlement } from './handler-settlement.interceptor.js';
import { applyNestRouteOptions, type NestRouteOptions } from './nest-route-options.js';
import { routeName } from './route-name.js';

/**
 * Concurrent requests with one key run the handler once, on any node; the others share its
 * response, which stays cached for `resultTtl`. A run past `maxDuration` answers it and its
 * waiters `503`. Options are checked here, naming the bad one.
 */
export function SingleFlight(
  options: SingleFlightRouteOptions & NestRouteOptions,
): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const name = routeName(target, propertyKey);
    const route = applyNestRouteOptions(name, options, target, propertyKey, descriptor);
    checkRouteOptions(name, 'singleFlight', route);
    SetMetadata(SINGLE_FLIGHT_METADATA, route)(target, propertyKey, descriptor);
    reportHandlerSettlement(target, propertyKey, descriptor);
  };
}
