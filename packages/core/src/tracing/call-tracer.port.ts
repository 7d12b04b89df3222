/**
 * Where oncely reports each protected call as a span. `createOncelyEngine` uses OpenTelemetry's
 * API when it is installed (`createOpenTelemetryTracer`); any other tracer implements this port
 * and is passed as the `tracing` option.
 *
 * A tracer never sees raw input: the attributes oncely sets are the operation, the mechanism,
 * the decision and a SHA-256 of the key, and a failure is named by its error class only.
 */
export interface CallTracer {
  /**
   * Whether a span started now could be recorded anywhere. Asked before each call; `false` runs
   * the call without a span (nothing of tracing runs), so a tracer with nowhere to send spans
   * costs nothing. Omitted: always.
   */
  enabled?(): boolean;
  /**
   * Runs `call` inside a new span named `name`, a child of the span active when `inSpan` is
   * called and active itself while `call` runs, so that the spans the handler starts are its
   * children. `attributes` are known before the span starts (a sampler may read them); `call`
   * adds the rest through the `CallSpan`. The span ends when `call` settles, and `call`'s
   * outcome (value or error) is `inSpan`'s.
   */
  inSpan<T>(
    name: string,
    attributes: Readonly<Record<string, string>>,
    call: (span: CallSpan) => Promise<T>,
  ): Promise<T>;
}

/** The span of one protected call, as oncely describes it while the call runs. */
export interface CallSpan {
  /** Whether the span is recorded: attributes that cost something are computed only then. */
  readonly recording: boolean;
  /** Sets one attribute of the span (oncely's own: `oncely.*`, `error.type`). */
  setAttribute(name: string, value: string): void;
  /**
   * Marks the call failed. `errorClass` is the error's class name, never its message: a message
   * may quote the input.
   */
  setError(errorClass: string): void;
}
