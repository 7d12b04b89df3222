import { OncelyError } from './oncely-error.js';

/**
 * oncely was set up in a way it cannot run safely with. Raised at start-up (or when a route is
 * defined), never per request. Every start-up error is one, so `instanceof` catches them all;
 * subclasses such as `RouteOptionsError` or `KeySpecError` name the option and its fix.
 */
export class OncelyConfigurationError extends OncelyError {
  readonly code: string = 'configuration';
}
