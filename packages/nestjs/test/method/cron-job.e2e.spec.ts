import { requireService, spawnWorkers, killAllWorkers, type Worker } from '@oncely/testing-kit';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { SqlSettlementLedger } from '../../../../apps/demo/src/jobs/sql-settlement.ledger.js';
import { PostgresSchema } from '../fixtures/postgres-schema.js';
import { uniqueNamespace } from '../fixtures/test-app.js';

interface Firing {
  readonly period: string;
  readonly round: number;
  readonly kind: 'settled' | 'running_elsewhere';
  /** The node whose run the firing got (its own or another's), for `settled`. */
  readonly ranOn: string | null;
  /** How many times the settlement of this period ran in this process, so far. */
  readonly executedHere: number;
}

const NODES = ['node-a', 'node-b', 'node-c'];
const PERIODS = ['2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28'];

describe('the daily settlement job on three processes (Redis + PostgreSQL)', () => {
  const schema = new PostgresSchema();
  let admin: DataSource;
  let workers: Worker[];

  beforeAll(async () => {
    await requireService('redis');
    await requireService('postgres');
    admin = await schema.create();
    await new SqlSettlementLedger(
      admin,
      `"${schema.name}"."settlement_run"`,
      'admin',
    ).createTable();
    const namespace = uniqueNamespace('cron');
    const keyPrefix = `oncely-cron-${randomUUID().slice(0, 8)}:`;
    workers = spawnWorkers(3, 'packages/nestjs/test/support/settlement.worker.ts', {
      args: (i) => [namespace, keyPrefix, schema.name, NODES[i]!],
    });
    await Promise.all(workers.map((worker) => worker.message(() => true, 170_000)));
  }, 180_000);

  afterAll(async () => {
    for (const worker of workers ?? []) worker.send({ stop: true });
    await Promise.race([
      Promise.all((workers ?? []).map((worker) => worker.exited)),
      new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
    ]);
    await killAllWorkers();
    await schema.drop();
  });

  async function runsOf(period: string): Promise<Array<{ node: string }>> {
    return await admin.query<Array<{ node: string }>>(
      `SELECT node FROM "${schema.name}"."settlement_run" WHERE business_period = $1`,
      [period],
    );
  }

  /** Every node fires `period` at once; resolves with each node's firing. */
  async function fireEverywhere(period: string, round: number): Promise<Firing[]> {
    for (const worker of workers) worker.send({ period, round });
    return Promise.all(
      workers.map((worker) =>
        worker.message<Firing>((message) => message.period === period && message.round === round),
      ),
    );
  }

  const executions = (firings: Firing[]) =>
    firings.reduce((sum, firing) => sum + firing.executedHere, 0);

  it('runs exactly once per period, however many nodes fire it', async () => {
    for (const period of PERIODS) {
      const firings = await fireEverywhere(period, 1);
      expect(executions(firings)).toBe(1);
      const runs = await runsOf(period);
      expect(runs).toHaveLength(1);
      const ranOn = firings.find((firing) => firing.executedHere === 1)?.ranOn;
      expect(runs[0]!.node).toBe(ranOn);
      for (const firing of firings) {
        if (firing.kind === 'settled') expect(firing.ranOn).toBe(ranOn);
        else expect(firing.kind).toBe('running_elsewhere');
      }
    }
    const [total] = await admin.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM "${schema.name}"."settlement_run"`,
    );
    expect(total?.n).toBe(PERIODS.length);
  });

  it('gives a repeated firing the run of its period back, without running again', async () => {
    for (const period of PERIODS) {
      const [first] = await runsOf(period);
      const firings = await fireEverywhere(period, 2);
      expect(firings.map((firing) => [firing.kind, firing.ranOn])).toEqual([
        ['settled', first!.node],
        ['settled', first!.node],
        ['settled', first!.node],
      ]);
      expect(executions(firings)).toBe(1);
      expect(await runsOf(period)).toHaveLength(1);
    }
  });
});
