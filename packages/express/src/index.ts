/**
 * `@oncely/express`: per-route middleware for durable idempotency and SingleFlight in plain
 * Express apps, with the HTTP behaviour of `@oncely/nestjs`. Start from {@link createOncely}.
 *
 * @packageDocumentation
 * @module @oncely/express
 */

export { KeyIgnore, InvalidBodyError, type BodyViolation } from '@oncely/core';
export * from './oncely.js';
export * from './oncely-express-options.interface.js';
export { OncelyConfigurationError } from '@oncely/core';
export * from './oncely-context.js';
export { BodyNotParsedError } from '@oncely/core';
