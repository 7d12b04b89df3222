import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/**
 * `@opentelemetry/api` is installed but could not be loaded (a broken install, a version without
 * the 1.x API). Raised by the engine's `start()`: tracing is on by default when the API is
 * installed, so a half-installed one fails the boot instead of silently dropping every trace.
 */
export class OpenTelemetryLoadError extends OncelyConfigurationError {
  override readonly code = 'opentelemetry_load';

  constructor(
    /** Who loaded the API (the engine's or module's name), as errors of the option name it. */
    readonly owner: string,
    /** Why the loaded module is unusable. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(
      `${owner} found @opentelemetry/api but cannot trace with it: ${reason}. Install a 1.x version of @opentelemetry/api, or set tracing: false to run without traces.`,
      options,
    );
  }
}
