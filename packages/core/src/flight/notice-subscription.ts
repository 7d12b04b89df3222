import type { FlightCoordinator } from './flight-coordinator.port.js';

/**
 * A follower's interest in the next completion notice for a key. It is registered before the
 * `acquire` it guards, so a leader completing between that `acquire`'s answer and the wait
 * cannot slip through unnoticed.
 */
export class NoticeSubscription {
  readonly #controller = new AbortController();
  /** `true` on a notice (or the coordinator's own time-out), `false` if the wait failed. */
  readonly #notified: Promise<boolean>;

  constructor(coordinator: FlightCoordinator, key: string, timeoutMs: number) {
    this.#notified = coordinator.waitForNotice(key, timeoutMs, this.#controller.signal).then(
      () => true,
      () => false,
    );
  }

  /** Resolves on the notice or after `delayMs`, whichever comes first. */
  async until(delayMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const elapsed = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, delayMs);
    });
    try {
      // A failed wait is not a notice: fall back to the poll delay.
      await Promise.race([elapsed, this.#notified.then((notified) => (notified ? null : elapsed))]);
    } finally {
      clearTimeout(timer);
    }
  }

  cancel(): void {
    this.#controller.abort();
  }
}
