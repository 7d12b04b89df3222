export { OncelyError } from './oncely-error.js';
export { OncelyConfigurationError } from './oncely-configuration.error.js';
export { LeaseLostError } from './lease-lost.error.js';
