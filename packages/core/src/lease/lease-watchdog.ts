import { LeaseLostError, type LeaseLossReason } from '../errors/lease-lost.error.js';
import { LazySignal } from './lazy-signal.js';

/** Share of the lease TTL between renewals: two renewals can fail before the lease runs out. */
const RENEW_FRACTION = 1 / 3;

/**
 * How long `confirm` waits for its renewal. A renewal that takes longer (a record row locked by
 * the holder's own open transaction) proves nothing either way.
 */
const CONFIRM_TIMEOUT_MS = 250;

/** A lease held while work runs (a flight's at the coordinator, a record's at its store). */
export interface WatchedLease {
  /** Names the lease in `LeaseLostError`: the flight key or the record identity. */
  readonly key: string;
  readonly fence: number;
  readonly ttl: number;
  /** When the lease was asked for (`performance.now()` time): its TTL counts from then. */
  readonly since: number;
  /** Extends the lease by `ttl` from now; `false` when it is no longer held. */
  readonly renew: () => Promise<boolean>;
  /** A renewal that failed rather than being refused: the next one may still succeed. */
  readonly onRenewError?: (error: unknown) => void;
  /** Called once when the lease is lost, with the error the signal aborts with. */
  readonly onLost?: (error: LeaseLostError) => void;
}

/**
 * Keeps a lease alive while its work runs, renewing every third of its TTL (no call at all when
 * the work ends before the first tick). The lease is lost, and the signal aborts with a
 * `LeaseLostError`, when a renewal is refused, or when renewals keep failing until the lease as
 * last confirmed has run out, since by then another caller may hold it.
 */
export class LeaseWatchdog {
  readonly #signal = new LazySignal();
  #lostWith: LeaseLostError | undefined;
  readonly #interval: number;
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;
  #stopped = false;
  #confirmedUntil: number;
  #confirming: Promise<boolean> | undefined;

  constructor(private readonly lease: WatchedLease) {
    this.#interval = Math.max(1, Math.floor(lease.ttl * RENEW_FRACTION));
    this.#confirmedUntil = lease.since + lease.ttl;
    this.#schedule(this.#interval);
  }

  get signal(): AbortSignal {
    return this.#signal.signal;
  }

  /**
   * Time left on the lease as last confirmed, counted from before that confirmation was asked
   * for, so never more than the store's; 0 once it ran out.
   */
  get remainingMs(): number {
    return Math.max(0, this.#confirmedUntil - performance.now());
  }

  /** Why the lease was lost, once it was. */
  get lostWith(): LeaseLostError | undefined {
    return this.#lostWith;
  }

  /**
   * Asks now, rather than at the next tick, whether the lease is still held: one renewal,
   * shared by concurrent askers. A refused one loses the lease as a tick would; one that fails or takes longer than
   * `CONFIRM_TIMEOUT_MS` proves nothing and answers `true`. For a caller about to wait for, or refuse itself in favour of, the work this lease
   * covers: an operator may have freed it.
   */
  confirm(): Promise<boolean> {
    if (this.#lostWith) return Promise.resolve(false);
    if (this.#stopped) return Promise.resolve(true);
    this.#confirming ??= this.#confirmNow().finally(() => (this.#confirming = undefined));
    return this.#confirming;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(delay: number): void {
    this.#timer = setTimeout(() => this.#tick(), Math.max(1, Math.ceil(delay)));
    this.#timer.unref();
  }

  /**
   * Ticks run on their own clock rather than after each renewal, so a renewal that hangs (a
   * client queueing commands while it reconnects) cannot hide the lease running out.
   */
  #tick(): void {
    const remaining = this.#confirmedUntil - performance.now();
    if (remaining <= 0) {
      this.#lose('expired');
      return;
    }
    if (!this.#renewing) void this.#renew();
    this.#schedule(Math.min(this.#interval, remaining));
  }

  async #renew(): Promise<void> {
    this.#renewing = true;
    const startedAt = performance.now();
    try {
      const renewed = await this.lease.renew();
      if (this.#stopped) return;
      if (renewed) this.#confirmed(startedAt);
      else this.#refused();
    } catch (error) {
      if (!this.#stopped) this.lease.onRenewError?.(error);
    } finally {
      this.#renewing = false;
    }
  }

  async #confirmNow(): Promise<boolean> {
    const startedAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const undecided = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), CONFIRM_TIMEOUT_MS);
      timer.unref();
    });
    let renewed: boolean | undefined;
    try {
      renewed = await Promise.race([this.lease.renew(), undecided]);
    } catch {
      return true;
    } finally {
      clearTimeout(timer);
    }
    if (renewed === undefined) return true;
    if (this.#stopped) return this.#lostWith === undefined;
    if (renewed) {
      this.#confirmed(startedAt);
      return true;
    }
    this.#refused();
    return false;
  }

  #confirmed(askedAt: number): void {
    this.#confirmedUntil = askedAt + this.lease.ttl;
  }

  /**
   * The error for the lease found lost at completion (a fenced `complete` refused): the one the
   * watchdog already reported, or one telling a release (the lease as last confirmed had time
   * left) from an expiry, as a refused renewal would.
   */
  lostAtCompletion(cause?: unknown): LeaseLostError {
    if (this.#lostWith) return this.#lostWith;
    return new LeaseLostError(this.lease.key, this.lease.fence, {
      reason: this.#lossReasonNow(),
      ...(cause !== undefined && { cause }),
    });
  }

  /**
   * A renewal the store refused. The lease as last confirmed counts from before that
   * confirmation was asked for, so while it has time left the store's lease has too: nobody
   * could take it over by expiry, it was released (an operator's force-release, a purge).
   */
  #refused(): void {
    this.#lose(this.#lossReasonNow());
  }

  #lossReasonNow(): LeaseLossReason {
    return this.#confirmedUntil > performance.now() ? 'released' : 'expired';
  }

  #lose(reason: LeaseLossReason): void {
    this.stop();
    this.#lostWith = new LeaseLostError(this.lease.key, this.lease.fence, { reason });
    this.#signal.abort(this.#lostWith);
    this.lease.onLost?.(this.#lostWith);
  }
}
