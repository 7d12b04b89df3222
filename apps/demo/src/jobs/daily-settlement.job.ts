import { Inject, Injectable } from '@nestjs/common';
import { IdempotentKey } from '@oncely/nestjs';
import {
  SETTLEMENT_LEDGER,
  type SettlementLedger,
  type SettlementRun,
} from './settlement-ledger.js';

export const DAILY_SETTLEMENT = 'daily-settlement';

/** What fires a settlement: the business day it closes (`YYYY-MM-DD`, UTC). */
export interface SettlementTrigger {
  readonly businessPeriod: string;
}

/**
 * The daily settlement. Every node fires it at 00:00; its key
 * `job:execute:v1:daily-settlement:{businessPeriod}` lets exactly one of them run it per period,
 * and the durable record keeps that run: a node firing late gets the same run back.
 *
 * The other nodes are refused at once (`onBusy: 'reject'`, the default) and stand by: should the
 * node running it die, its lease (the module's `leaseTtl`, 30 s by default) runs out and exactly
 * one of them runs the period then (docs/jobs.md). A node dying after its write but before the
 * record completes has settled without recording it, and the take-over settles again: where that
 * matters, make the write idempotent per period (a unique key). The demo's ledger has none, on
 * purpose (`SqlSettlementLedger`).
 */
@Injectable()
export class DailySettlementJob {
  constructor(@Inject(SETTLEMENT_LEDGER) private readonly ledger: SettlementLedger) {}

  @IdempotentKey({
    namespace: 'job',
    operation: 'execute',
    scope: () => DAILY_SETTLEMENT,
    target: 'args.0.businessPeriod',
    input: ['args.0.businessPeriod'],
    idempotencyKey: 'ignored',
    // A job is never retried by a client: keep its run for a week of late or repeated firings.
    retention: 7 * 24 * 60 * 60 * 1000,
    description: 'Settles one business period once, whichever node fires first',
  })
  async run(trigger: SettlementTrigger): Promise<SettlementRun> {
    return this.ledger.record(trigger.businessPeriod);
  }
}
