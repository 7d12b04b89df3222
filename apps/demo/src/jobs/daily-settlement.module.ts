import { Module, type DynamicModule, type FactoryProvider } from '@nestjs/common';
import { DailySettlementJob } from './daily-settlement.job.js';
import { DailySettlementScheduler } from './daily-settlement.scheduler.js';
import { SETTLEMENT_LEDGER, SETTLEMENT_NODE, type SettlementLedger } from './settlement-ledger.js';

export interface DailySettlementModuleOptions {
  /** This node's name, recorded with the runs it makes. */
  readonly node: string;
  readonly ledger: Omit<FactoryProvider<SettlementLedger | Promise<SettlementLedger>>, 'provide'>;
}

/** The daily settlement job and its scheduler; needs `OncelyModule` in the app. */
@Module({})
export class DailySettlementModule {
  static register(options: DailySettlementModuleOptions): DynamicModule {
    return {
      module: DailySettlementModule,
      providers: [
        { provide: SETTLEMENT_NODE, useValue: options.node },
        { provide: SETTLEMENT_LEDGER, ...options.ledger },
        DailySettlementJob,
        DailySettlementScheduler,
      ],
      exports: [DailySettlementJob, DailySettlementScheduler],
    };
  }
}
