export { KeyIgnore, InvalidBodyError, type BodyViolation } from '@oncely/core';
export * from './oncely.js';
export * from './oncely-express-options.interface.js';
export { OncelyConfigurationError } from '@oncely/core';
export * from './oncely-context.js';
