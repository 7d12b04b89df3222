import { describeOptionValue } from '../errors/describe-option-value.js';
import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type { CallTracer } from '../tracing/call-tracer.port.js';
import { loadOpenTelemetryTracer } from '../tracing/open-telemetry.loader.js';

/**
 * The engine's tracer, from its `tracing` option: the tracer given, none for `false`, and by
 * default OpenTelemetry's when `@opentelemetry/api` is installed. OpenTelemetry's API does
 * nothing until an app registers an SDK, so tracing by default costs an app without one a
 * no-op span per call and an app without the API nothing at all (it is never loaded).
 *
 * The API loads asynchronously, from the moment the engine is built; `ready()` (awaited by the
 * engine's `start()`) waits for it, and calls made before it has loaded are not traced.
 */
export class CallTracing {
  #tracer: CallTracer | undefined;
  readonly #loading: Promise<void> | undefined;

  constructor(owner: string, option: unknown) {
    if (option === false) return;
    if (option !== undefined) {
      this.#tracer = tracerOption(owner, option);
      return;
    }
    this.#loading = loadOpenTelemetryTracer(owner).then((tracer) => {
      this.#tracer = tracer;
    });
    // `start()` reports a failed load; an engine that is never started must not leave it unhandled.
    this.#loading.catch(() => undefined);
  }

  /** The tracer now, for the executor to ask at each call. */
  readonly current = (): CallTracer | undefined => this.#tracer;

  /** Resolves once the tracer is known; rejects with `OpenTelemetryLoadError` for a broken API. */
  async ready(): Promise<void> {
    await this.#loading;
  }
}

function tracerOption(owner: string, option: unknown): CallTracer {
  const candidate = option as Partial<CallTracer> | null;
  if (typeof candidate === 'object' && typeof candidate?.inSpan === 'function') {
    return candidate as CallTracer;
  }
  throw new OncelyConfigurationError(
    `${owner} option "tracing" must be false or a CallTracer (e.g. createOpenTelemetryTracer(otel)), got ${describeOptionValue(option)}. Leave it out to trace with @opentelemetry/api whenever it is installed.`,
  );
}
