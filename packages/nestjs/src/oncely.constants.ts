/** Metadata key of `@IdempotentKey()` options on a handler. */
export const IDEMPOTENT_KEY_METADATA = 'oncely:idempotent-key';

/** Metadata key of `@SingleFlight()` options on a handler. */
export const SINGLE_FLIGHT_METADATA = 'oncely:single-flight';

/**
 * Marks a route whose keys are built after its own interceptors ran (`keyAfterInterceptors`, or
 * a multer interceptor found at start-up).
 */
export const KEY_AFTER_INTERCEPTORS_METADATA = 'oncely:key-after-interceptors';

/** Where the interceptor leaves the transaction of a `transactional` route on the request. */
export const ONCELY_TRANSACTION = Symbol.for('@oncely/nestjs:transaction');

/** The module's `OncelyRuntime` (engine and Nest-only options), for its own providers. */
export const ONCELY_RUNTIME = Symbol('OncelyRuntime');

/**
 * The options `OncelyModule.forRootAsync` takes next to its factory (`namespace`, `service`,
 * `defaults`). A string, like the options token, so that `oncely registry` finds them by name in
 * an app's module graph without running the factory.
 */
export const ONCELY_DECLARED_OPTIONS = 'ONCELY_DECLARED_OPTIONS';
