import type { CallSpan, CallTracer } from './call-tracer.port.js';

/** The instrumentation scope oncely's spans are reported under. */
export const ONCELY_TRACER_NAME = '@oncely/core';

/** A span of `@opentelemetry/api`, as far as oncely uses one. */
export interface OpenTelemetrySpan {
  /** Whether the span is sampled: oncely hashes the key only for a recorded span. */
  isRecording(): boolean;
  /** Sets one of oncely's attributes (`oncely.*`, `error.type`). */
  setAttribute(name: string, value: string): unknown;
  /** Marks a failed call, with the error's class name as the message. */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Ends the span when the call settles. */
  end(): void;
}

/** A tracer of `@opentelemetry/api`, as far as oncely uses one. */
export interface OpenTelemetryTracer {
  /** Starts a span, child of the active one, and runs `fn` with it active. */
  startActiveSpan(
    name: string,
    options: { kind: number; attributes: Readonly<Record<string, string>> },
    fn: (span: OpenTelemetrySpan) => Promise<unknown>,
  ): Promise<unknown>;
}

/**
 * The parts of `@opentelemetry/api` (1.x) oncely uses; pass the module itself
 * (`import * as otel from '@opentelemetry/api'`). Typed here rather than imported, so that
 * `@oncely/core` compiles and loads without it.
 */
export interface OpenTelemetryApi {
  /** The global tracer provider. */
  readonly trace: OpenTelemetryTracerProvider & {
    /**
     * The provider registered globally: the API's proxy, whose `getDelegateTracer` answers
     * nothing until an SDK registers a provider behind it.
     */
    getTracerProvider(): OpenTelemetryTracerProvider;
  };
  /** The span kinds; oncely's spans are `INTERNAL`. */
  readonly SpanKind: {
    /** The kind of a span that neither serves nor makes a remote call. */
    readonly INTERNAL: number;
  };
  /** The span status codes; oncely sets only `ERROR`. */
  readonly SpanStatusCode: {
    /** The status of a failed call. */
    readonly ERROR: number;
  };
}

/** A tracer provider of `@opentelemetry/api` (the global one, or an SDK's). */
export interface OpenTelemetryTracerProvider {
  /** The tracer of one instrumentation scope: oncely asks for `@oncely/core`'s. */
  getTracer(name: string, version?: string): OpenTelemetryTracer;
  /** A proxy's (`ProxyTracerProvider`) tracer from the provider behind it, if one is set. */
  getDelegateTracer?(name: string): unknown;
}

/** Options of `createOpenTelemetryTracer`. */
export interface OpenTelemetryTracerOptions {
  /**
   * Where spans go; the global tracer provider (the one the OpenTelemetry SDK registers) when
   * omitted. Read through the API's proxy, so an SDK registered after oncely starts still works.
   */
  readonly tracerProvider?: OpenTelemetryTracerProvider;
}

/**
 * A `CallTracer` over OpenTelemetry's API: one span of kind INTERNAL per protected call, child of
 * the active span, whose context is active while the call runs (so the handler's spans are its
 * children). `createOncelyEngine` builds one by itself when `@opentelemetry/api` is installed;
 * call this to hand it a module you loaded (a bundled app) or another tracer provider:
 *
 * ```ts
 * import * as otel from '@opentelemetry/api';
 * createOncely({ namespace: 'shop', tracing: createOpenTelemetryTracer(otel) });
 * ```
 */
export function createOpenTelemetryTracer(
  api: OpenTelemetryApi,
  options: OpenTelemetryTracerOptions = {},
): CallTracer {
  const given = options.tracerProvider;
  return new OpenTelemetryCallTracer(
    (given ?? api.trace).getTracer(ONCELY_TRACER_NAME),
    api.SpanKind.INTERNAL,
    api.SpanStatusCode.ERROR,
    given === undefined ? () => api.trace.getTracerProvider() : () => given,
  );
}

class OpenTelemetryCallTracer implements CallTracer {
  /** Once an SDK stands behind the provider, it stays: no need to ask again. */
  #sdkFound = false;

  constructor(
    private readonly tracer: OpenTelemetryTracer,
    private readonly internalKind: number,
    private readonly errorCode: number,
    /** Where spans go, read at each call while it is a proxy with nothing behind it. */
    private readonly provider: () => OpenTelemetryTracerProvider,
  ) {}

  /**
   * Without an SDK the API hands out non-recording spans that nothing reads, and leaves the
   * active context as it was (a propagated parent stays the handler's): a call gains nothing
   * from one but its cost, on every request of an app that has the API only as a dependency.
   */
  enabled(): boolean {
    if (this.#sdkFound) return true;
    const provider = this.provider();
    this.#sdkFound =
      provider.getDelegateTracer === undefined ||
      provider.getDelegateTracer(ONCELY_TRACER_NAME) !== undefined;
    return this.#sdkFound;
  }

  inSpan<T>(
    name: string,
    attributes: Readonly<Record<string, string>>,
    call: (span: CallSpan) => Promise<T>,
  ): Promise<T> {
    const options = { kind: this.internalKind, attributes };
    return this.tracer.startActiveSpan(name, options, async (span) => {
      try {
        return await call(new OpenTelemetryCallSpan(span, this.errorCode));
      } finally {
        span.end();
      }
    }) as Promise<T>;
  }
}

class OpenTelemetryCallSpan implements CallSpan {
  readonly recording: boolean;

  constructor(
    private readonly span: OpenTelemetrySpan,
    private readonly errorCode: number,
  ) {
    this.recording = span.isRecording();
  }

  setAttribute(name: string, value: string): void {
    this.span.setAttribute(name, value);
  }

  setError(errorClass: string): void {
    this.span.setStatus({ code: this.errorCode, message: errorClass });
  }
}
