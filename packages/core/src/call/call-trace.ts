import type { OncelyOutcome } from '../events/oncely-event.js';
import { sha256Hex } from '../key/sha256.js';
import { recordKeyHash } from '../record/record-key-hash.js';
import type { CallSpan, CallTracer } from '../tracing/call-tracer.port.js';
import type { CallKeys } from './call-keys.js';
import type { ProtectedRoute } from './protected-route.js';

/** The attributes of a protected call's span. */
export const CALL_SPAN_ATTRIBUTES = {
  /** `namespace:operation:version`. */
  operation: 'oncely.operation',
  /** `idempotency` or `single-flight`: the route's outer mechanism. */
  mechanism: 'oncely.mechanism',
  /** The call's decision, named as its events name it (`executed`, `replayed`, `conflict`, …). */
  decision: 'oncely.decision',
  /**
   * SHA-256 hex of the identity (the record's `keyHash`) on an idempotent route, of the
   * SingleFlight key on a `@SingleFlight` one: the same key gives the same hash, and no key field
   * is readable from it.
   */
  keyHash: 'oncely.key.hash',
  /** OpenTelemetry's own: the class of the error the call failed or was refused with. */
  errorType: 'error.type',
} as const;

/** Decisions that refuse a request for what it is: answered, not failed. */
const REFUSALS: ReadonlySet<OncelyOutcome> = new Set([
  'conflict',
  'mismatch',
  'foreign_owner',
  'refused',
]);

/**
 * One protected call's span, as the call describes it: the keys once they are known, the last
 * decision the call reports (to its events, or by `decided`), and how it ended.
 *
 * A call that throws is marked failed (status ERROR, the error's class name) unless its decision
 * is a refusal (409, 422, a refused key): those are answers to the client, as a 4xx is to an
 * HTTP server span, and keep only `error.type`.
 */
export class CallTrace {
  #outcome: OncelyOutcome | undefined;

  private constructor(private readonly span: CallSpan) {}

  /** Runs `call` inside a span of `tracer` named after the route's operation. */
  static run<T>(
    tracer: CallTracer,
    route: ProtectedRoute,
    call: (trace: CallTrace) => Promise<T>,
  ): Promise<T> {
    const protection = route.idempotent ?? route.singleFlight;
    const operation = protection?.operation ?? route.name;
    const attributes = {
      [CALL_SPAN_ATTRIBUTES.operation]: operation,
      [CALL_SPAN_ATTRIBUTES.mechanism]: route.idempotent ? 'idempotency' : 'single-flight',
    };
    return tracer.inSpan(`oncely ${operation}`, attributes, async (span) => {
      const trace = new CallTrace(span);
      try {
        const value = await call(trace);
        span.setAttribute(CALL_SPAN_ATTRIBUTES.decision, trace.#outcome ?? 'executed');
        return value;
      } catch (error) {
        trace.#failed(error);
        throw error;
      }
    });
  }

  /** Hears each decision the call reports; the last one stands. */
  readonly decided = (outcome: OncelyOutcome): void => {
    this.#outcome = outcome;
  };

  /** The call's keys, hashed: only when the span is recorded, since hashing costs. */
  keys(keys: CallKeys): void {
    if (!this.span.recording) return;
    const hash = keys.idempotency
      ? recordKeyHash(keys.idempotency.identity)
      : keys.singleFlight && sha256Hex(keys.singleFlight.key);
    if (hash) this.span.setAttribute(CALL_SPAN_ATTRIBUTES.keyHash, hash);
  }

  #failed(error: unknown): void {
    const outcome = this.#outcome ?? 'failed';
    const errorClass = classOf(error);
    this.span.setAttribute(CALL_SPAN_ATTRIBUTES.decision, outcome);
    this.span.setAttribute(CALL_SPAN_ATTRIBUTES.errorType, errorClass);
    if (!REFUSALS.has(outcome)) this.span.setError(errorClass);
  }
}

/** The class of what was thrown, never its message: a message may quote the input. */
function classOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return typeof error;
  const name: unknown = (error as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? name : 'Error';
}
