import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { IdempotencyConflictError } from '@oncely/core';
import { DailySettlementJob } from './daily-settlement.job.js';
import type { SettlementRun } from './settlement-ledger.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How a node's firing ended: the period is settled (by this node now, or by whichever node ran
 * it first, whose run comes back), or its settlement is still running on another node, and this
 * node stands by to run it should that node die before completing it.
 */
export type SettlementFiring =
  | { readonly kind: 'settled'; readonly run: SettlementRun }
  | { readonly kind: 'running_elsewhere' };

/**
 * Fires the daily settlement on every node at 00:00 UTC for the day that just closed, as a
 * `@Cron('0 0 * * *')` would; oncely makes the duplicate firings harmless, and keeps the
 * refused ones standing by until the period is settled, so a dying node cannot lose it.
 */
@Injectable()
export class DailySettlementScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DailySettlementScheduler.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(@Inject(DailySettlementJob) private readonly job: DailySettlementJob) {}

  onApplicationBootstrap(): void {
    this.scheduleNext();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  async fire(businessPeriod: string): Promise<SettlementFiring> {
    try {
      return { kind: 'settled', run: await this.job.run({ businessPeriod }) };
    } catch (error) {
      if (error instanceof IdempotencyConflictError) return { kind: 'running_elsewhere' };
      throw error;
    }
  }

  private scheduleNext(): void {
    const now = Date.now();
    const midnight = Math.ceil((now + 1) / DAY_MS) * DAY_MS;
    this.timer = setTimeout(() => {
      const closedDay = new Date(midnight - DAY_MS).toISOString().slice(0, 10);
      this.fire(closedDay).then(
        (firing) => this.logger.log(`Settlement of ${closedDay}: ${firing.kind}`),
        (error: unknown) => this.logger.error(`Settlement of ${closedDay} failed`, error),
      );
      this.scheduleNext();
    }, midnight - now);
    this.timer.unref();
  }
}
