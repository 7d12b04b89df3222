import { OncelyError } from './oncely-error.js';

/** oncely was set up in a way it cannot run safely with. Raised at start-up, never per request. */
export class OncelyConfigurationError extends OncelyError {
  readonly code = 'configuration';
}
