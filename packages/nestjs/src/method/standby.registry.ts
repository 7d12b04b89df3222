import { types } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { IdempotencyConflictError, RecordStoreUnavailableError } from '@oncely/core';
import type {
  ProtectedRoute,
  ResolvedIdempotentRoute,
  ValueCallResult,
} from '@oncely/core/adapter';

/** Node fires a longer timer at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** Floor of a wait: a refusal saying "retry at once" is about a run of this process, just ended. */
const MIN_WAIT_MS = 50;
/**
 * Spreads the standbys of several nodes, so that the later one usually finds the earlier one's
 * lease instead of racing it for the record (the coordinator and the record decide either way).
 */
const JITTER_MS = 250;
/**
 * Most standbys kept at once. Each holds its call's arguments until the lease it waits for ends,
 * so a flood of refusals for distinct identities must not hold memory without bound.
 */
export const DEFAULT_MAX_STANDBYS = 10_000;

/**
 * One more call of a refused provider method, with its first arguments, through the executor;
 * `onRun` is called when its handler starts in this process.
 */
export type StandbyAttempt = (onRun: () => void) => Promise<ValueCallResult>;

/**
 * The standbys of one app's provider-method calls refused as in flight elsewhere
 * (`IdempotencyConflictError`, under `onBusy: 'reject'` or after `wait`). The caller got the
 * refusal at once; the standby calls the method again, with the same arguments, when the lease
 * of the run it was refused for would end, and lets the durable record decide: completed → a
 * replay, and the standby ends; still in flight (its node is alive and renews the lease) → it
 * waits again; the lease ran out (its node died) or the run failed → exactly one node across the
 * cluster acquires the record and runs the method. Without it, a provider method has no client
 * that would retry: a job whose leader is killed would stay unrun for the period.
 *
 * One standby per identity per app. A standby ends on its call's replay or run (its own run's
 * failure included: reported by the usual `failed` event), on a refusal other than in flight
 * (mismatch, quota), at the record's `retention` (after which a call would be a new run, not a
 * take-over), or when the app shuts down (`close`). It retries a store that cannot be reached
 * only while its method has not started here. Its calls report the usual oncely events
 * (`executed` on a take-over, `replayed`, `conflict` while it waits).
 */
export class StandbyRegistry {
  readonly #standbys = new Map<string, Promise<void>>();
  readonly #closing = new AbortController();
  readonly #logger = new Logger('OncelyModule');

  /** @param maxStandbys standbys kept at once; a refusal past them gets none (it is logged). */
  constructor(private readonly maxStandbys = DEFAULT_MAX_STANDBYS) {}

  /** Standbys waiting or calling. */
  get size(): number {
    return this.#standbys.size;
  }

  /**
   * Stands by for `refusal`'s identity, unless a standby for it already does or the app is
   * shutting down. Only idempotent routes have a record to take over.
   */
  keep(refusal: IdempotencyConflictError, route: ProtectedRoute, attempt: StandbyAttempt): void {
    const { identity } = refusal;
    const { idempotent } = route;
    if (!idempotent || this.#closing.signal.aborted || this.#standbys.has(identity)) return;
    if (this.#standbys.size >= this.maxStandbys) {
      this.#logger.warn(
        `${route.name}: no standby for ${identity}, since ${this.maxStandbys} standbys wait already (OncelyModule option maxStandbys): this app will not call it again if its run elsewhere stops. Raise maxStandbys if that many refusals are expected.`,
      );
      return;
    }
    const standby = this.#standBy(refusal, route.name, idempotent, attempt).finally(() =>
      this.#standbys.delete(identity),
    );
    this.#standbys.set(identity, standby);
  }

  /**
   * Cancels every waiting standby and waits for those calling the method right now: a take-over
   * cut half-way would hold the record until its lease ran out. No standby starts afterwards.
   */
  async close(): Promise<void> {
    this.#closing.abort();
    await Promise.allSettled(this.#standbys.values());
  }

  async #standBy(
    refusal: IdempotencyConflictError,
    name: string,
    { leaseTtl, retention }: ResolvedIdempotentRoute,
    attempt: StandbyAttempt,
  ): Promise<void> {
    const { identity } = refusal;
    const deadline = performance.now() + retention;
    let wait = waitAfter(refusal, leaseTtl);
    for (;;) {
      if (performance.now() + wait > deadline) {
        this.#logger.warn(
          `${name}: stopped standing by for ${identity} at its retention (${retention} ms), without seeing it completed.`,
        );
        return;
      }
      if (!(await this.#sleep(wait))) return;
      let ran = false;
      try {
        const { replayed } = await attempt(() => {
          ran = true;
        });
        if (!replayed) {
          this.#logger.log(
            `${name}: ran ${identity} here, its run elsewhere having stopped without completing.`,
          );
        }
        return;
      } catch (error) {
        const next = nextWait(error, ran, leaseTtl);
        if (next === undefined) {
          this.#logger.warn(
            `${name}: the standby for ${identity} ended with ${describeError(error)}`,
          );
          return;
        }
        wait = next;
      }
    }
  }

  /** `false` when the app shuts down meanwhile. Unref'd: a standby keeps no process alive. */
  async #sleep(ms: number): Promise<boolean> {
    const { signal } = this.#closing;
    try {
      await sleep(Math.min(ms, MAX_TIMER_MS), undefined, { signal, ref: false });
      return true;
    } catch {
      return false;
    }
  }
}

/** When the lease of the run `refusal` was refused for ends (`retryAfterMs`), plus a jitter. */
function waitAfter(refusal: IdempotencyConflictError, leaseTtl: number): number {
  // 0 means the coordinator did not say: a whole lease is the longest it can have left.
  const remaining = refusal.retryAfterMs > 0 ? refusal.retryAfterMs : leaseTtl;
  return Math.max(MIN_WAIT_MS, remaining) + Math.random() * JITTER_MS;
}

/** The wait before the next call, or `undefined` when the standby is done. */
function nextWait(error: unknown, ran: boolean, leaseTtl: number): number | undefined {
  if (error instanceof IdempotencyConflictError) return waitAfter(error, leaseTtl);
  // Nothing was confirmed and the method did not start here: as safe to call again as a refusal.
  if (error instanceof RecordStoreUnavailableError && !ran) {
    return leaseTtl + Math.random() * JITTER_MS;
  }
  return undefined;
}

function describeError(error: unknown): string {
  return types.isNativeError(error) ? `${error.name}: ${error.message}` : String(error);
}
