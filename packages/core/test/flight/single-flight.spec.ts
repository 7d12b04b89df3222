import {
  FlightBusyError,
  InMemoryFlightCoordinator,
  SingleFlight,
  type FlightResult,
  type OncelyEvent,
} from '@oncely/core';
import { deferred, settle, until } from './flight-test-helpers.js';
import { InstrumentedCoordinator } from './instrumented-coordinator.js';

describe('SingleFlight', () => {
  let memory: InMemoryFlightCoordinator;
  let coordinator: InstrumentedCoordinator;

  beforeEach(() => {
    memory = new InMemoryFlightCoordinator();
    coordinator = new InstrumentedCoordinator(memory);
  });

  afterEach(() => memory.close());

  it('runs 100 concurrent calls with one key once and gives all of them the same result', async () => {
    const events: OncelyEvent[] = [];
    const flight = new SingleFlight(coordinator, { events: (event) => events.push(event) });
    const gate = deferred();
    let executions = 0;
    const work = async () => {
      executions += 1;
      await gate.promise;
      return { report: 'r-1', rows: [1, 2, 3] };
    };

    const calls = Array.from({ length: 100 }, () =>
      flight.run('report:42', work, { operation: 'shop:report:v1' }),
    );
    gate.resolve();
    const results = await Promise.all(calls);

    expect(executions).toBe(1);
    for (const result of results) expect(result.value).toEqual({ report: 'r-1', rows: [1, 2, 3] });
    expect(countSources(results)).toEqual({ executed: 1, joined: 99 });
    expect(events).toHaveLength(100);
    expect(events.filter((event) => event.outcome === 'joined')).toHaveLength(99);
    expect(events.find((event) => event.outcome === 'executed')).toMatchObject({
      mechanism: 'single-flight',
      key: 'report:42',
      operation: 'shop:report:v1',
    });
  });

  it('shares one execution between engines on one coordinator, as between nodes', async () => {
    // Polls so rare that only the completion notice can wake the followers.
    const nodes = Array.from(
      { length: 3 },
      () => new SingleFlight(coordinator, { backoff: { initial: 60_000, max: 60_000 } }),
    );
    const gate = deferred();
    let executions = 0;
    const work = async () => {
      executions += 1;
      await gate.promise;
      return 'summary';
    };

    const leaderCalls = Array.from({ length: 20 }, () => nodes[0]!.run('doc:7', work));
    await until(() => executions === 1);
    const followerCalls = nodes
      .slice(1)
      .flatMap((node) => Array.from({ length: 20 }, () => node.run('doc:7', work)));
    await until(() => coordinator.pendingWaits === 2);
    gate.resolve();

    const leaderResults = await Promise.all(leaderCalls);
    const followerResults = await Promise.all(followerCalls);
    expect(executions).toBe(1);
    expect(countSources(leaderResults)).toEqual({ executed: 1, joined: 19 });
    expect(countSources(followerResults)).toEqual({ shared: 2, joined: 38 });
    for (const result of [...leaderResults, ...followerResults])
      expect(result.value).toBe('summary');
  });

  describe('coordinator calls', () => {
    it('costs a leader acquire and complete, with no renewal for work shorter than a tick', async () => {
      const flight = new SingleFlight(coordinator, { leaseTtl: 10_000 });
      await flight.run('k', async () => 'v');
      expect(coordinator.calls).toEqual({
        acquire: 1,
        complete: 1,
        renew: 0,
        release: 0,
        waitForNotice: 0,
      });
    });

    it('costs a cache hit one acquire', async () => {
      const flight = new SingleFlight(coordinator);
      await flight.run('k', async () => 'v');
      coordinator.resetCalls();
      const hit = await new SingleFlight(coordinator).run('k', async () => 'other');
      expect(hit).toEqual({ value: 'v', source: 'cached' });
      expect(coordinator.calls).toEqual({
        acquire: 1,
        complete: 0,
        renew: 0,
        release: 0,
        waitForNotice: 0,
      });
    });

    it('costs a follower woken by the notice one more acquire', async () => {
      const leader = new SingleFlight(coordinator);
      const follower = new InstrumentedCoordinator(memory);
      const gate = deferred();
      const leading = leader.run('k', () => gate.promise.then(() => 'v'));
      await until(() => coordinator.calls.acquire === 1);
      const following = new SingleFlight(follower, {
        backoff: { initial: 60_000, max: 60_000 },
      }).run('k', async () => 'other');
      await until(() => follower.pendingWaits === 1);
      gate.resolve();

      expect(await following).toEqual({ value: 'v', source: 'shared' });
      await leading;
      expect(follower.calls.acquire).toBe(2);
      expect(follower.calls.complete + follower.calls.release + follower.calls.renew).toBe(0);
    });
  });

  describe('a busy key', () => {
    it("rejects at once with onBusy: 'reject', carrying the lease's remaining time", async () => {
      const events: OncelyEvent[] = [];
      const gate = deferred();
      const leading = new SingleFlight(coordinator, { leaseTtl: 5_000 }).run('k', () =>
        gate.promise.then(() => 'v'),
      );
      await until(() => coordinator.calls.acquire === 1);

      const rejected = new SingleFlight(coordinator, {
        onBusy: 'reject',
        events: (event) => events.push(event),
      }).run('k', async () => 'other');

      const error = await rejected.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(FlightBusyError);
      expect(error).toMatchObject({ code: 'flight_busy', key: 'k' });
      const remaining = (error as FlightBusyError).leaseRemainingMs;
      expect(remaining).toBeGreaterThan(0);
      expect(remaining).toBeLessThanOrEqual(5_000);
      expect(events.map((event) => event.outcome)).toEqual(['conflict']);
      gate.resolve();
      await leading;
    });

    it("refuses an onBusy: 'reject' caller at once while a flight of this process runs the work", async () => {
      const flight = new SingleFlight(coordinator, { leaseTtl: 5_000 });
      const gate = deferred();
      let executions = 0;
      const leading = flight.run('k', async () => {
        executions += 1;
        await gate.promise;
        return 'v';
      });
      await until(() => executions === 1);

      // Settles while the leader's work is still held at the gate: it did not wait for it.
      const error = await flight
        .run('k', async () => 'other', { onBusy: 'reject' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(FlightBusyError);
      expect((error as FlightBusyError).leaseRemainingMs).toBeGreaterThan(0);
      gate.resolve();
      expect(await leading).toEqual({ value: 'v', source: 'executed' });
      expect(executions).toBe(1);
    });

    it("refuses an onBusy: 'reject' caller at once while a flight of this process waits for another node's lease", async () => {
      const gate = deferred();
      const leading = new SingleFlight(coordinator, { leaseTtl: 5_000 }).run('k', () =>
        gate.promise.then(() => 'v'),
      );
      await until(() => coordinator.calls.acquire === 1);
      const node = new SingleFlight(coordinator, { wait: 5_000 });
      const following = node.run('k', async () => 'other');
      const asking = node
        .run('k', async () => 'other', { onBusy: 'reject' })
        .catch((caught: unknown) => caught);
      await until(() => coordinator.pendingWaits === 1);

      // One joined while the flight still asked the coordinator, one once it waits.
      expect(await asking).toBeInstanceOf(FlightBusyError);
      const error = await node
        .run('k', async () => 'other', { onBusy: 'reject' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(FlightBusyError);
      // The time left of the lease held elsewhere, not of a lease this node never took.
      expect((error as FlightBusyError).leaseRemainingMs).toBeLessThanOrEqual(5_000);
      gate.resolve();
      expect(await leading).toEqual({ value: 'v', source: 'executed' });
      expect(await following).toEqual({ value: 'v', source: 'shared' });
    });

    it('gives up with FlightBusyError once wait has passed', async () => {
      const gate = deferred();
      let executions = 0;
      const work = async () => {
        executions += 1;
        await gate.promise;
        return 'v';
      };
      const leading = new SingleFlight(coordinator, { leaseTtl: 60_000 }).run('k', work);
      await until(() => executions === 1);

      const outcomes = await Promise.all(
        [0, 30].map((wait) => settle(new SingleFlight(coordinator).run('k', work, { wait }))),
      );
      for (const { error } of outcomes) {
        expect(error).toBeInstanceOf(FlightBusyError);
        expect((error as FlightBusyError).leaseRemainingMs).toBeGreaterThan(0);
      }
      expect(executions).toBe(1);
      gate.resolve();
      expect(await leading).toEqual({ value: 'v', source: 'executed' });
    });

    it('lets exactly one follower take over when the leader vanishes without completing', async () => {
      const crashed = 'crashed-owner';
      await coordinator.acquire('k', crashed, 100);
      let executions = 0;
      const nodes = Array.from({ length: 4 }, () => new SingleFlight(coordinator));
      const results = await Promise.all(
        nodes.map((node) =>
          node.run('k', async () => {
            executions += 1;
            return 'recovered';
          }),
        ),
      );
      expect(executions).toBe(1);
      expect(countSources(results)).toEqual({ executed: 1, shared: 3 });
    });
  });
});

function countSources(results: readonly FlightResult<unknown>[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { source } of results) counts[source] = (counts[source] ?? 0) + 1;
  return counts;
}
