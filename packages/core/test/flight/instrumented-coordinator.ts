import {
  CoordinatorUnavailableError,
  type AcquireOutcome,
  type FlightCoordinator,
  type FlightOutcome,
} from '@oncely/core';

type Method = 'acquire' | 'renew' | 'complete' | 'release' | 'waitForNotice';

/**
 * Test fixture around a real coordinator: counts calls, tracks pending notice waits, and can be
 * switched "down" so every call fails as an unreachable backend would.
 */
export class InstrumentedCoordinator implements FlightCoordinator {
  readonly calls: Record<Method, number> = {
    acquire: 0,
    renew: 0,
    complete: 0,
    release: 0,
    waitForNotice: 0,
  };
  pendingWaits = 0;
  down = false;
  /** Renewals never answer, as with a client queueing commands while it reconnects. */
  stallRenewals = false;

  constructor(readonly inner: FlightCoordinator) {}

  resetCalls(): void {
    for (const method of Object.keys(this.calls) as Method[]) this.calls[method] = 0;
  }

  acquire(key: string, owner: string, leaseTtlMs: number): Promise<AcquireOutcome> {
    return this.#call('acquire', () => this.inner.acquire(key, owner, leaseTtlMs));
  }

  renew(key: string, owner: string, leaseTtlMs: number): Promise<boolean> {
    if (this.stallRenewals) {
      this.calls.renew += 1;
      return new Promise(() => {});
    }
    return this.#call('renew', () => this.inner.renew(key, owner, leaseTtlMs));
  }

  complete(key: string, owner: string, outcome: FlightOutcome): Promise<boolean> {
    return this.#call('complete', () => this.inner.complete(key, owner, outcome));
  }

  release(key: string, owner: string): Promise<boolean> {
    return this.#call('release', () => this.inner.release(key, owner));
  }

  async waitForNotice(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.calls.waitForNotice += 1;
    this.pendingWaits += 1;
    try {
      await this.inner.waitForNotice(key, timeoutMs, signal);
    } finally {
      this.pendingWaits -= 1;
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async #call<T>(method: Method, call: () => Promise<T>): Promise<T> {
    this.calls[method] += 1;
    if (this.down)
      throw new CoordinatorUnavailableError('test', { cause: new Error('ECONNREFUSED') });
    return call();
  }
}
