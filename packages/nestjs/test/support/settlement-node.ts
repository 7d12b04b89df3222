import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { OncelyEvent } from '@oncely/core';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import { nextParentMessage, reportToParent, services } from '@oncely/testing-kit';
import { RedisFlightCoordinator } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import {
  DAILY_SETTLEMENT,
  DailySettlementJob,
  type SettlementTrigger,
} from '../../../../apps/demo/src/jobs/daily-settlement.job.js';
import { DailySettlementModule } from '../../../../apps/demo/src/jobs/daily-settlement.module.js';
import { DailySettlementScheduler } from '../../../../apps/demo/src/jobs/daily-settlement.scheduler.js';
import {
  SETTLEMENT_LEDGER,
  type SettlementLedger,
  type SettlementRun,
} from '../../../../apps/demo/src/jobs/settlement-ledger.js';
import { SqlSettlementLedger } from '../../../../apps/demo/src/jobs/sql-settlement.ledger.js';
import { ONCELY_RUNTIME } from '../../src/oncely.constants.js';
import type { OncelyRuntime } from '../../src/oncely.runtime.js';

const [namespace, keyPrefix, schema, node, lease] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const leaseTtl = Number(lease);

/** What the parent asks; see the spec for the protocol. */
interface ParentMessage {
  /** Fire `period` through the scheduler of `job` (the demo's by default). */
  readonly period?: string;
  readonly round?: number;
  readonly job?: SettlementJobName;
  /** Block this firing's run of the settlement, if it gets one, until `release`. */
  readonly hold?: true;
  readonly release?: string;
  /** Report what this process did for a period (runs, oncely events, standbys), as `id`. */
  readonly report?: string;
  readonly id?: number;
  /** Close the app, watch `linger` ms for oncely events, report them and exit. */
  readonly stop?: true;
  readonly linger?: number;
}

type SettlementJobName = 'demo' | 'waiting-briefly' | 'waiting-long';

const dataSource = new DataSource(
  withIdempotencyRecords({ type: 'postgres', ...services.postgres, schema, poolSize: 5 }),
);
await dataSource.initialize();

interface Hold {
  readonly released: Promise<void>;
  readonly release: () => void;
  /** Whether a run is blocked on it: only the first one is. */
  taken: boolean;
}

/** Held runs per period: the parent knows which node leads while that node's run is blocked. */
const holds = new Map<string, Hold>();

function hold(period: string): void {
  let open = (): void => undefined;
  const released = new Promise<void>((resolve) => (open = resolve));
  holds.set(period, { released, release: open, taken: false });
}

function release(period: string): void {
  holds.get(period)?.release();
  holds.delete(period);
}

/** The demo's ledger, counting the settlements this process really ran. */
const sql = new SqlSettlementLedger(dataSource, `"${schema}"."settlement_run"`, node);
const executed = new Map<string, number>();
const ledger: SettlementLedger = {
  record: async (period) => {
    const held = holds.get(period);
    if (held && !held.taken) {
      held.taken = true;
      reportToParent({ holding: period, node });
      await held.released;
    }
    executed.set(period, (executed.get(period) ?? 0) + 1);
    return sql.record(period);
  },
};

const events: Array<Pick<OncelyEvent, 'outcome' | 'key'>> = [];

/** The demo's key under another operation, for the same job with `onBusy: 'wait'`. */
const WAITING_KEY = {
  namespace: 'job',
  scope: () => DAILY_SETTLEMENT,
  target: 'args.0.businessPeriod',
  input: ['args.0.businessPeriod'],
  idempotencyKey: 'ignored',
  onBusy: 'wait',
} as const;

/** Waits less than a lease: a dead leader's lease outlives the wait, as with the defaults. */
@Injectable()
class BrieflyWaitingSettlementJob extends DailySettlementJob {
  @IdempotentKey({ ...WAITING_KEY, operation: 'execute-waiting-briefly', wait: leaseTtl / 4 })
  override async run(trigger: SettlementTrigger): Promise<SettlementRun> {
    return super.run(trigger);
  }
}

/** Waits several leases: a dead leader's lease runs out while the others still wait. */
@Injectable()
class LongWaitingSettlementJob extends DailySettlementJob {
  @IdempotentKey({ ...WAITING_KEY, operation: 'execute-waiting-long', wait: leaseTtl * 5 })
  override async run(trigger: SettlementTrigger): Promise<SettlementRun> {
    return super.run(trigger);
  }
}

@Module({
  imports: [
    OncelyModule.forRoot({
      namespace,
      coordinator: new RedisFlightCoordinator({ ...services.redis }, { keyPrefix }),
      store: new TypeOrmIdempotencyRecordStore(dataSource),
      defaults: { leaseTtl },
      events: (event) => {
        if (event.mechanism === 'idempotency')
          events.push({ outcome: event.outcome, key: event.key });
      },
    }),
    DailySettlementModule.register({
      node,
      ledger: { useFactory: () => ledger },
    }),
  ],
  providers: [
    { provide: SETTLEMENT_LEDGER, useValue: ledger },
    BrieflyWaitingSettlementJob,
    LongWaitingSettlementJob,
  ],
})
class SettlementNodeModule {}

const app = await NestFactory.createApplicationContext(SettlementNodeModule, { logger: false });
const schedulers: Record<SettlementJobName, DailySettlementScheduler> = {
  demo: app.get(DailySettlementScheduler),
  'waiting-briefly': new DailySettlementScheduler(app.get(BrieflyWaitingSettlementJob)),
  'waiting-long': new DailySettlementScheduler(app.get(LongWaitingSettlementJob)),
};
const { standbys } = app.get<OncelyRuntime>(ONCELY_RUNTIME);
const eventsOf = (period: string) => events.filter((event) => event.key.endsWith(`:${period}`));
reportToParent({ ready: node });

async function fire(message: ParentMessage): Promise<void> {
  const period = message.period ?? '';
  if (message.hold) hold(period);
  const firing = await schedulers[message.job ?? 'demo'].fire(period);
  // Only the firing's own run is held: a standby's later take-over runs freely.
  holds.delete(period);
  reportToParent({
    period,
    round: message.round,
    job: message.job ?? 'demo',
    kind: firing.kind,
    ranOn: firing.kind === 'settled' ? firing.run.node : null,
    executedHere: executed.get(period) ?? 0,
    standbys: standbys.size,
  });
}

let stop: ParentMessage | undefined;
while (!stop) {
  const message = await nextParentMessage<ParentMessage>();
  if (message.stop) stop = message;
  else if (message.release !== undefined) release(message.release);
  else if (message.report !== undefined) {
    reportToParent({
      report: message.report,
      id: message.id,
      node,
      executedHere: executed.get(message.report) ?? 0,
      outcomes: eventsOf(message.report).map((event) => event.outcome),
      standbys: standbys.size,
    });
  } else {
    fire(message).catch((error: unknown) =>
      reportToParent({ period: message.period, round: message.round, error: String(error) }),
    );
  }
}

await app.close();
const closedAt = events.length;
const standbysAfterClose = standbys.size;
await sleep(stop.linger ?? 0);
reportToParent({
  stopped: node,
  standbysAfterClose,
  eventsAfterClose: events.slice(closedAt).map((event) => event.outcome),
});
await dataSource.destroy();
// The parent's messages are read until the end of the pipe, which the parent keeps open: stop
// reading, so that the process ends by itself once nothing else (a timer, a socket) holds it.
process.stdin.destroy();
