import { Inject, Injectable } from '@nestjs/common';
import { IdempotencyConflictError } from '@oncely/core';
import { IdempotentKey } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import type { Gate } from './support/gate.js';

/** What fires an invoicing run: the month it bills (`YYYY-MM`), not the time it fired. */
export interface InvoicingTrigger {
  readonly billingMonth: string;
}

export interface InvoiceRun {
  readonly billingMonth: string;
  readonly runId: string;
}

/**
 * Stands in for the invoices table every node writes to. In a database it is also unique on
 * `billing_month`; this one is not, so that the tests see what the key alone prevents.
 */
@Injectable()
export class InvoiceLedger {
  readonly runs: InvoiceRun[] = [];
  gate: Gate | undefined;
  down = false;

  async issue(billingMonth: string): Promise<InvoiceRun> {
    await this.gate?.pass();
    if (this.down) throw new Error('The invoices database is unavailable.');
    const run = { billingMonth, runId: randomUUID() };
    this.runs.push(run);
    return run;
  }
}

@Injectable()
export class MonthlyInvoicingJob {
  constructor(@Inject(InvoiceLedger) private readonly ledger: InvoiceLedger) {}

  @IdempotentKey({
    // The job's name is its operation: the boot refuses two jobs claiming one name.
    operation: 'monthly-invoicing',
    target: 'args.0.billingMonth',
    input: ['args.0.billingMonth'],
    idempotencyKey: 'ignored',
    // Longer than a month: a late or repeated firing gets the run back, never a second one.
    retention: 45 * 24 * 60 * 60 * 1000,
  })
  run(trigger: InvoicingTrigger): Promise<InvoiceRun> {
    return this.ledger.issue(trigger.billingMonth);
  }
}

export type InvoicingFiring =
  { readonly kind: 'invoiced'; readonly run: InvoiceRun } | { readonly kind: 'running_elsewhere' };

@Injectable()
export class InvoicingScheduler {
  constructor(@Inject(MonthlyInvoicingJob) private readonly job: MonthlyInvoicingJob) {}

  /** Called on every node by the scheduler, e.g. `@Cron('0 2 1 * *')` from `@nestjs/schedule`. */
  async fire(billingMonth: string): Promise<InvoicingFiring> {
    try {
      return { kind: 'invoiced', run: await this.job.run({ billingMonth }) };
    } catch (error) {
      // Another node runs this month now; this node stands by in case that node dies.
      if (error instanceof IdempotencyConflictError) return { kind: 'running_elsewhere' };
      throw error;
    }
  }
}
