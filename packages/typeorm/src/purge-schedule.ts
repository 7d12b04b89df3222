import { types } from 'node:util';
import { positiveWholeNumber } from '@oncely/core/adapter';
import type { PurgeScheduleOptions } from './typeorm-idempotency-record-store.options.js';

/** The longest pause `setTimeout` keeps; longer ones would fire at once. */
const maxPause = 2 ** 31 - 1;

/** Keeps one purge's delete under every driver's bound-parameter limit (SQLite: 32 766). */
export const maxPurgeBatch = 10_000;

/** The `purge` option checked, with the default failure report. */
export function purgeScheduleOptions(
  options: PurgeScheduleOptions,
): Required<PurgeScheduleOptions> {
  return {
    every: positiveWholeNumber('purge.every', options.every),
    batch: Math.min(positiveWholeNumber('purge.batch', options.batch), maxPurgeBatch),
    onError: options.onError ?? reportPurgeFailure,
  };
}

function reportPurgeFailure(error: unknown): void {
  const reason = types.isNativeError(error) ? error.message : String(error);
  process.emitWarning(
    `oncely could not purge expired idempotency records; the next purge tries again: ${reason}`,
    { type: 'OncelyPurgeWarning', code: 'ONCELY_PURGE_FAILED' },
  );
}

/**
 * Runs a purge on a timer until stopped: after each pause it deletes batches until one comes back
 * short, then pauses again. Each pause is drawn anew between half and one and a half times
 * `every`, so nodes started together drift apart instead of purging the same rows at once. The
 * timer is unref'd (it never keeps a process alive) and a failure is reported, not thrown: the
 * next purge tries again.
 */
export class PurgeSchedule {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly purge: (batchSize: number) => Promise<number>,
    private readonly options: Required<PurgeScheduleOptions>,
  ) {}

  /** Schedules the first purge; does nothing once started or stopped. */
  start(): void {
    if (this.#stopped || this.#timer !== undefined || this.#running !== undefined) return;
    this.#schedule();
  }

  /** Cancels the next purge and waits for a running one to finish its statement. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #schedule(): void {
    const pause = Math.min(Math.round(this.options.every * (0.5 + Math.random())), maxPause);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#purgeBatches().then(() => {
        this.#running = undefined;
        if (!this.#stopped) this.#schedule();
      });
    }, pause);
    this.#timer.unref();
  }

  async #purgeBatches(): Promise<void> {
    const { batch, onError } = this.options;
    try {
      let deleted = batch;
      while (!this.#stopped && deleted === batch) deleted = await this.purge(batch);
    } catch (error) {
      try {
        onError(error);
      } catch {
        // A reporter that throws must not stop the schedule.
      }
    }
  }
}
