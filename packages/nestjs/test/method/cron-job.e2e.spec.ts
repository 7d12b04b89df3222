import { requireService, spawnWorker, killAllWorkers, type Worker } from '@oncely/testing-kit';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { SqlSettlementLedger } from '../../../../apps/demo/src/jobs/sql-settlement.ledger.js';
import { PostgresSchema } from '../fixtures/postgres-schema.js';
import { uniqueNamespace } from '../fixtures/test-app.js';

type SettlementJobName = 'demo' | 'waiting-briefly' | 'waiting-long';

interface Firing {
  readonly period: string;
  readonly round: number;
  readonly kind: 'settled' | 'running_elsewhere';
  /** The node whose run the firing got (its own or another's), for `settled`. */
  readonly ranOn: string | null;
  /** How many times the settlement of this period ran in this process, so far. */
  readonly executedHere: number;
  /** Standbys of this process, for any period, when the firing answered. */
  readonly standbys: number;
}

interface NodeReport {
  readonly node: string;
  readonly executedHere: number;
  /** The outcomes of this process's oncely events for the period, in order. */
  readonly outcomes: readonly string[];
  readonly standbys: number;
}

const WORKER = 'packages/nestjs/test/support/settlement.worker.ts';
const NODES = ['node-a', 'node-b', 'node-c'];
const PERIODS = ['2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28'];
/** The module's lease: how long a SIGKILLed leader keeps its period before a standby runs it. */
const LEASE_MS = 2_000;
/** Generous: a take-over is due about one lease after the kill; CI machines are slow. */
const TAKE_OVER_TIMEOUT_MS = 40_000;

describe('the daily settlement job on three processes (Redis + PostgreSQL)', () => {
  const schema = new PostgresSchema();
  const namespace = uniqueNamespace('cron');
  const keyPrefix = `oncely-cron-${randomUUID().slice(0, 8)}:`;
  let admin: DataSource;
  let workers: Worker[];
  /** Nodes started in place of killed ones; the next test waits for them. */
  let booting: Promise<unknown> = Promise.resolve();
  let reports = 0;

  const spawnNode = (index: number) =>
    spawnWorker(WORKER, {
      args: [namespace, keyPrefix, schema.name, NODES[index]!, String(LEASE_MS)],
    });
  const ready = (index: number) =>
    workers[index]!.message<{ ready?: string }>(
      (message) => message.ready === NODES[index],
      170_000,
    );

  beforeAll(async () => {
    await requireService('redis');
    await requireService('postgres');
    admin = await schema.create();
    await new SqlSettlementLedger(
      admin,
      `"${schema.name}"."settlement_run"`,
      'admin',
    ).createTable();
    workers = NODES.map((_, index) => spawnNode(index));
    await Promise.all(NODES.map((_, index) => ready(index)));
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

  /** Polls `probe` until it returns a value; a probe that never does fails the test. */
  async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
    const deadline = Date.now() + TAKE_OVER_TIMEOUT_MS;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`Nothing after ${TAKE_OVER_TIMEOUT_MS} ms`);
      await sleep(100);
    }
  }

  async function reportOf(index: number, period: string): Promise<NodeReport> {
    const id = ++reports;
    workers[index]!.send({ report: period, id });
    return workers[index]!.message<NodeReport & { id?: number }>((message) => message.id === id);
  }

  /**
   * Every node fires `period` of `job`, its own run held; resolves once one node runs it (the
   * leader, blocked in its settlement) and lets the others' runs go free, should they get one.
   */
  async function fireWithHeldLeader(job: SettlementJobName, period: string) {
    for (const worker of workers) worker.send({ period, round: 1, job, hold: true });
    const leader = await eventually(() => {
      const index = workers.findIndex((worker) =>
        worker.messages.some((message) => (message as { holding?: string }).holding === period),
      );
      return index >= 0 ? index : undefined;
    });
    const survivors = [0, 1, 2].filter((index) => index !== leader);
    for (const index of survivors) workers[index]!.send({ release: period });
    const firingOf = (index: number) =>
      workers[index]!.message<Firing>(
        (message) => message.period === period && message.round === 1,
        TAKE_OVER_TIMEOUT_MS,
      );
    return { leader, survivors, firingOf };
  }

  /** SIGKILL: no clean-up runs, the lease is left to run out. A new node takes its place. */
  async function killMidRun(index: number): Promise<void> {
    const leader = workers[index]!;
    leader.kill('SIGKILL');
    expect(await leader.exited).toEqual({ code: null, signal: 'SIGKILL' });
    workers[index] = spawnNode(index);
    booting = Promise.all([booting, ready(index)]);
  }

  /**
   * The period was run once more, on exactly one of `survivors`, and both survivors' standbys
   * ended: the runner's with its run, the other's with that run given back.
   */
  async function expectOneTakeOver(period: string, survivors: number[]): Promise<number> {
    const [run] = await eventually(async () => {
      const runs = await runsOf(period);
      return runs.length > 0 ? runs : undefined;
    });
    const runner = survivors.find((index) => NODES[index] === run!.node);
    if (runner === undefined) throw new Error(`${run!.node} ran it, not a survivor`);
    const other = survivors.find((index) => index !== runner)!;
    const [ran, gotBack] = await eventually(async () => {
      const ran = await reportOf(runner, period);
      const gotBack = await reportOf(other, period);
      return gotBack.outcomes.includes('replayed') ? [ran, gotBack] : undefined;
    });
    expect(ran.executedHere).toBe(1);
    expect(ran.outcomes.filter((outcome) => outcome === 'executed')).toHaveLength(1);
    expect(gotBack.executedHere).toBe(0);
    expect(gotBack.outcomes).not.toContain('executed');
    // The killed leader never reached its write: one committed run, the take-over's.
    expect(await runsOf(period)).toEqual([{ node: NODES[runner] }]);
    return runner;
  }

  /** A later firing on every node, the new one included, gets the take-over's run back. */
  async function expectSettledBy(period: string, runner: number): Promise<void> {
    await booting;
    const firings = await fireEverywhere(period, 2);
    expect(firings.map((firing) => [firing.kind, firing.ranOn])).toEqual(
      NODES.map(() => ['settled', NODES[runner]]),
    );
    expect(executions(firings)).toBe(1);
    expect(await runsOf(period)).toHaveLength(1);
  }

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

  it("runs the period of a leader SIGKILLed mid-run once more, on one other node (onBusy: 'reject')", async () => {
    await booting;
    const period = '2026-12-01';
    const { leader, survivors, firingOf } = await fireWithHeldLeader('demo', period);
    const answers = await Promise.all(survivors.map(firingOf));
    expect(answers.map((firing) => firing.kind)).toEqual([
      'running_elsewhere',
      'running_elsewhere',
    ]);
    expect(answers.every((firing) => firing.standbys > 0)).toBe(true);
    await killMidRun(leader);
    const runner = await expectOneTakeOver(period, survivors);
    await expectSettledBy(period, runner);
  }, 120_000);

  it("does the same when the others gave up waiting before the lease ran out (onBusy: 'wait')", async () => {
    await booting;
    const period = '2026-12-02';
    const { leader, survivors, firingOf } = await fireWithHeldLeader('waiting-briefly', period);
    const answers = await Promise.all(survivors.map(firingOf));
    expect(answers.map((firing) => firing.kind)).toEqual([
      'running_elsewhere',
      'running_elsewhere',
    ]);
    await killMidRun(leader);
    const runner = await expectOneTakeOver(period, survivors);
    expect(await runsOf(period)).toEqual([{ node: NODES[runner] }]);
  }, 120_000);

  it("lets a firing still waiting when the lease runs out run the period itself (onBusy: 'wait')", async () => {
    await booting;
    const period = '2026-12-03';
    const { leader, survivors, firingOf } = await fireWithHeldLeader('waiting-long', period);
    await killMidRun(leader);
    const answers = await Promise.all(survivors.map(firingOf));
    const [run] = await runsOf(period);
    expect(answers.map((firing) => [firing.kind, firing.ranOn])).toEqual([
      ['settled', run!.node],
      ['settled', run!.node],
    ]);
    expect(survivors.map((index) => NODES[index])).toContain(run!.node);
    expect(executions(answers)).toBe(1);
    expect(await runsOf(period)).toHaveLength(1);
  }, 120_000);

  it('cancels the standbys of a node shutting down, which then exits cleanly', async () => {
    await booting;
    const period = '2026-12-04';
    const { leader, survivors, firingOf } = await fireWithHeldLeader('demo', period);
    const answers = await Promise.all(survivors.map(firingOf));
    expect(answers.map((firing) => firing.kind)).toEqual([
      'running_elsewhere',
      'running_elsewhere',
    ]);
    expect(answers.every((firing) => firing.standbys > 0)).toBe(true);
    const [stopping, staying] = survivors as [number, number];
    // Past the standby's due time: a standby left behind would call (and report) meanwhile.
    workers[stopping]!.send({ stop: true, linger: 2 * LEASE_MS });
    const stopped = await workers[stopping]!.message<Record<string, unknown>>(
      (message) => message.stopped === NODES[stopping],
    );
    expect(stopped).toMatchObject({ standbysAfterClose: 0, eventsAfterClose: [] });
    expect(await workers[stopping]!.exited).toEqual({ code: 0, signal: null });

    // The leader was alive all along: its run completes, and the other standby gets it back.
    workers[leader]!.send({ release: period });
    await expect(firingOf(leader)).resolves.toMatchObject({
      kind: 'settled',
      ranOn: NODES[leader],
      executedHere: 1,
    });
    const report = await eventually(async () => {
      const current = await reportOf(staying, period);
      return current.outcomes.includes('replayed') ? current : undefined;
    });
    expect(report.executedHere).toBe(0);
    expect(await runsOf(period)).toEqual([{ node: NODES[leader] }]);
  }, 120_000);
});
