import type { FlightOutcome } from './flight-coordinator.port.js';
import type { FailurePolicy } from './flight.types.js';
import { MaxDurationExceededError } from './max-duration-exceeded.error.js';
import type { ResultCodec } from './result-codec.js';
import {
  SERVICE_MARK,
  serviceOfToken,
  type ResolvedFlightOptions,
} from './single-flight-options.js';

/** Marks a stored flight outcome as "ran past maxDuration", whatever the failure policy. */
const EXPIRED_MARK = 'oncely:max-duration-exceeded';
/** Marks a stored flight outcome as "the run again after a transient failure failed too". */
const RETRY_FAILED_MARK = 'oncely:retry-failed';

/**
 * What a leader stores when its flight ends, and what followers read back. Every stored outcome
 * is kept at least `handoffTtl`, so that the followers waiting when it is stored read it.
 *
 * Each outcome, result or error, names the service that stored it in front of the codec's text
 * (`<service>#<payload>`, as owner tokens do; just `#<payload>` without a service), so that a
 * caller of another service on the same coordinator can tell it is not its own (`ownerOf`).
 */
export class FlightOutcomes {
  readonly #stamp: string;

  constructor(
    private readonly codec: ResultCodec,
    private readonly handoffTtl: number,
    service: string | undefined,
  ) {
    this.#stamp = `${service ?? ''}${SERVICE_MARK}`;
  }

  /**
   * A result the codec refuses (too large, not serialisable) is not stored, yet the followers
   * waiting for it must not hang nor run the work again: they get the codec's error, kept only
   * for `handoffTtl`, while the leader's caller keeps its value.
   */
  result(
    value: unknown,
    settings: ResolvedFlightOptions,
  ): { outcome: FlightOutcome; storeError?: unknown } {
    try {
      const payload = this.#encode(value);
      return { outcome: { kind: 'result', payload, ttlMs: this.#keep(settings.resultTtl) } };
    } catch (storeError) {
      const payload = this.#encodeError(storeError, settings.failurePolicy) ?? this.#encode(null);
      return { outcome: { kind: 'error', payload, ttlMs: this.handoffTtl }, storeError };
    }
  }

  /**
   * A deterministic failure to share for `errorTtl`; a transient failure of a run that took over
   * after an earlier one failed (`retry`), to hand to the callers that waited with it for
   * `handoffTtl`; otherwise `undefined`: release the lease, so that one waiter runs again.
   */
  failure(
    error: unknown,
    settings: ResolvedFlightOptions,
    retry: boolean,
  ): FlightOutcome | undefined {
    const policy = settings.failurePolicy;
    if (isDeterministic(error, policy)) {
      const payload = this.#encodeError(error, policy);
      if (payload === undefined) return undefined;
      return { kind: 'error', payload, ttlMs: this.#keep(settings.errorTtl) };
    }
    if (!retry) return undefined;
    const payload = this.#encodeError(error, policy, RETRY_FAILED_MARK);
    return payload === undefined ? undefined : { kind: 'error', payload, ttlMs: this.handoffTtl };
  }

  /** Waiters get the expiry itself; `handoffTtl` later the key is free for a retry. */
  expiry(error: MaxDurationExceededError): FlightOutcome {
    const payload = this.#encode({
      [EXPIRED_MARK]: { fence: error.fence, maxDurationMs: error.maxDurationMs },
    });
    return { kind: 'error', payload, ttlMs: this.handoffTtl };
  }

  /** The service that stored an outcome; `undefined` for an engine without `service`. */
  ownerOf(payload: string): string | undefined {
    return serviceOfToken(payload);
  }

  readResult(payload: string): unknown {
    return this.#decode(payload);
  }

  /**
   * The error a stored failure stands for; `handedOff` when it is kept only for the callers that
   * waited for its run (an expiry, a failed retry), not for those arriving afterwards.
   */
  readFailure(
    payload: string,
    key: string,
    policy: FailurePolicy,
  ): { readonly error: Error; readonly handedOff: boolean } {
    const stored = this.#decode(payload);
    if (typeof stored === 'object' && stored !== null && RETRY_FAILED_MARK in stored) {
      const failure = (stored as Record<string, unknown>)[RETRY_FAILED_MARK];
      return { error: policy.deserialize(failure), handedOff: true };
    }
    if (typeof stored === 'object' && stored !== null && EXPIRED_MARK in stored) {
      const mark = (stored as Record<string, { fence?: unknown; maxDurationMs?: unknown }>)[
        EXPIRED_MARK
      ];
      const error = new MaxDurationExceededError(
        key,
        Number(mark?.fence),
        Number(mark?.maxDurationMs),
      );
      return { error, handedOff: true };
    }
    return { error: policy.deserialize(stored), handedOff: false };
  }

  #encode(value: unknown): string {
    return this.#stamp + this.codec.encode(value);
  }

  #decode(payload: string): unknown {
    return this.codec.decode(payload.slice(payload.indexOf(SERVICE_MARK) + 1));
  }

  #keep(ttl: number): number {
    return Math.max(ttl, this.handoffTtl);
  }

  /**
   * The serialised error (under `mark` when given), without its body if that makes it fit, or
   * nothing if it never fits.
   */
  #encodeError(error: unknown, policy: FailurePolicy, mark?: string): string | undefined {
    const encode = (value: unknown) => this.#encode(mark === undefined ? value : { [mark]: value });
    let serialized: unknown;
    try {
      serialized = policy.serialize(error);
      return encode(serialized);
    } catch {
      if (typeof serialized !== 'object' || serialized === null || !('body' in serialized)) {
        return undefined;
      }
    }
    try {
      const { body: _body, ...withoutBody } = serialized as Record<string, unknown>;
      return encode(withoutBody);
    } catch {
      return undefined;
    }
  }
}

function isDeterministic(error: unknown, policy: FailurePolicy): boolean {
  try {
    return policy.classify(error) === 'deterministic';
  } catch {
    // A policy that cannot decide must not share a failure nobody can vouch for.
    return false;
  }
}
