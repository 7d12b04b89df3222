import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OncelyModule } from '@oncely/nestjs';
import { nextParentMessage, reportToParent, services } from '@oncely/testing-kit';
import { RedisFlightCoordinator } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { DailySettlementModule } from '../../../../apps/demo/src/jobs/daily-settlement.module.js';
import { DailySettlementScheduler } from '../../../../apps/demo/src/jobs/daily-settlement.scheduler.js';
import type { SettlementLedger } from '../../../../apps/demo/src/jobs/settlement-ledger.js';
import { SqlSettlementLedger } from '../../../../apps/demo/src/jobs/sql-settlement.ledger.js';

const [namespace, keyPrefix, schema, node] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
];

const dataSource = new DataSource(
  withIdempotencyRecords({ type: 'postgres', ...services.postgres, schema, poolSize: 5 }),
);
await dataSource.initialize();

/** The demo's ledger, counting the settlements this process really ran. */
const sql = new SqlSettlementLedger(dataSource, `"${schema}"."settlement_run"`, node);
const executed = new Map<string, number>();
const ledger: SettlementLedger = {
  record: (period) => {
    executed.set(period, (executed.get(period) ?? 0) + 1);
    return sql.record(period);
  },
};

@Module({
  imports: [
    OncelyModule.forRoot({
      namespace,
      coordinator: new RedisFlightCoordinator({ ...services.redis }, { keyPrefix }),
      store: new TypeOrmIdempotencyRecordStore(dataSource),
    }),
    DailySettlementModule.register({
      node,
      ledger: { useFactory: () => ledger },
    }),
  ],
})
class SettlementNodeModule {}

const app = await NestFactory.createApplicationContext(SettlementNodeModule, { logger: false });
const scheduler = app.get(DailySettlementScheduler);
reportToParent({ ready: node });

for (;;) {
  const message = await nextParentMessage<{ period?: string; round?: number; stop?: true }>();
  if (message.stop) break;
  const period = message.period ?? '';
  const firing = await scheduler.fire(period);
  reportToParent({
    period,
    round: message.round,
    kind: firing.kind,
    ranOn: firing.kind === 'settled' ? firing.run.node : null,
    executedHere: executed.get(period) ?? 0,
  });
}

await app.close();
await dataSource.destroy();
