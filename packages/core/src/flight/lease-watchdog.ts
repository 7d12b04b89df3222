import { LeaseLostError } from '../errors/lease-lost.error.js';
import type { FlightCoordinator } from './flight-coordinator.port.js';

/** Share of the lease TTL between renewals: two renewals can fail before the lease runs out. */
const RENEW_FRACTION = 1 / 3;

/** The lease a leader holds; `since` is when it was asked for (`performance.now()` time). */
export interface HeldLease {
  readonly key: string;
  readonly owner: string;
  readonly fence: number;
  readonly leaseTtl: number;
  readonly since: number;
}

/**
 * Keeps a leader's lease alive while its work runs, renewing every third of the lease TTL (no
 * call at all when the work ends before the first tick). The signal fires, with a
 * `LeaseLostError` as its reason, when a renewal is refused, or when renewals keep failing until
 * the lease as last confirmed has run out, since by then another caller may lead.
 */
export class LeaseWatchdog {
  /** Created on first use: an `AbortController` costs more than the rest of a flight. */
  #controller: AbortController | undefined;
  #lostWith: LeaseLostError | undefined;
  readonly #interval: number;
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;
  #stopped = false;
  #confirmedUntil: number;

  constructor(
    private readonly coordinator: FlightCoordinator,
    private readonly lease: HeldLease,
    private readonly onRenewError: (error: unknown) => void,
  ) {
    this.#interval = Math.max(1, Math.floor(lease.leaseTtl * RENEW_FRACTION));
    this.#confirmedUntil = lease.since + lease.leaseTtl;
    this.#schedule(this.#interval);
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#lostWith) this.#controller.abort(this.#lostWith);
    }
    return this.#controller.signal;
  }

  /** Why the lease was lost, once it was. */
  get lostWith(): LeaseLostError | undefined {
    return this.#lostWith;
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
      this.#lose();
      return;
    }
    if (!this.#renewing) void this.#renew();
    this.#schedule(Math.min(this.#interval, remaining));
  }

  async #renew(): Promise<void> {
    this.#renewing = true;
    const startedAt = performance.now();
    try {
      const { key, owner, leaseTtl } = this.lease;
      const renewed = await this.coordinator.renew(key, owner, leaseTtl);
      if (this.#stopped) return;
      if (renewed) this.#confirmedUntil = startedAt + leaseTtl;
      else this.#lose();
    } catch (error) {
      if (!this.#stopped) this.onRenewError(error);
    } finally {
      this.#renewing = false;
    }
  }

  #lose(): void {
    this.stop();
    this.#lostWith = new LeaseLostError(this.lease.key, this.lease.fence);
    this.#controller?.abort(this.#lostWith);
  }
}
