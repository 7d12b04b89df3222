import {
  CoordinatorUnavailableError,
  InMemoryFlightCoordinator,
  SingleFlight,
  type OncelyEvent,
} from '@oncely/core';
import { deferred, settle, until } from './flight-test-helpers.js';
import { InstrumentedCoordinator } from './instrumented-coordinator.js';

describe('SingleFlight with the coordinator down', () => {
  let memory: InMemoryFlightCoordinator;
  let coordinator: InstrumentedCoordinator;
  let events: OncelyEvent[];

  beforeEach(() => {
    memory = new InMemoryFlightCoordinator();
    coordinator = new InstrumentedCoordinator(memory);
    events = [];
  });

  afterEach(() => memory.close());

  const outcomes = () => events.map((event) => event.outcome);

  it("runs the work uncoordinated with onCoordinatorDown: 'open', still joining local calls", async () => {
    const flight = new SingleFlight(coordinator, { events: (event) => events.push(event) });
    coordinator.down = true;
    const gate = deferred();
    let executions = 0;
    const work = async ({ fence }: { fence: number }) => {
      executions += 1;
      await gate.promise;
      return fence;
    };
    const calls = Array.from({ length: 5 }, () => flight.run('k', work));
    gate.resolve();
    const results = await Promise.all(calls);

    expect(executions).toBe(1);
    expect(results.map((result) => result.source)).toEqual([
      'executed',
      'joined',
      'joined',
      'joined',
      'joined',
    ]);
    expect(results[0]!.value).toBe(0);
    expect(outcomes().sort()).toEqual(
      ['coordinator_down', 'executed', ...Array(4).fill('joined')].sort(),
    );
    const down = events.find((event) => event.outcome === 'coordinator_down')!;
    expect(down.error).toBeInstanceOf(CoordinatorUnavailableError);
    expect(coordinator.calls.acquire).toBe(1);
  });

  it("throws CoordinatorUnavailableError with onCoordinatorDown: 'closed' and runs nothing", async () => {
    const flight = new SingleFlight(coordinator, {
      onCoordinatorDown: 'closed',
      events: (event) => events.push(event),
    });
    coordinator.down = true;
    let executions = 0;
    const { error } = await settle(flight.run('k', async () => ++executions));
    expect(error).toBeInstanceOf(CoordinatorUnavailableError);
    expect(error).toMatchObject({ code: 'coordinator_unavailable', backend: 'test' });
    expect(executions).toBe(0);
    expect(outcomes()).toEqual(['coordinator_down']);
  });

  it('coordinates again as soon as the coordinator is back', async () => {
    const flight = new SingleFlight(coordinator, { onCoordinatorDown: 'closed' });
    coordinator.down = true;
    await settle(flight.run('k', async () => 'never'));
    coordinator.down = false;
    const result = await flight.run('k', async ({ fence }) => fence);
    expect(result.source).toBe('executed');
    expect(result.value).toBeGreaterThan(0);
    expect(await flight.run('k', async () => -1)).toEqual({
      value: result.value,
      source: 'cached',
    });
  });

  it('keeps the result for its caller when complete fails', async () => {
    const flight = new SingleFlight(coordinator, { events: (event) => events.push(event) });
    const result = await flight.run('k', async () => {
      coordinator.down = true;
      return 'done';
    });
    expect(result).toEqual({ value: 'done', source: 'executed' });
    expect(outcomes()).toEqual(['coordinator_down', 'executed']);
    expect(events[1]!.error).toBeInstanceOf(CoordinatorUnavailableError);
  });

  it("keeps the work's own error for its caller when release fails", async () => {
    const flight = new SingleFlight(coordinator, { events: (event) => events.push(event) });
    const failure = new Error('transient');
    const { error } = await settle(
      flight.run('k', async () => {
        coordinator.down = true;
        throw failure;
      }),
    );
    expect(error).toBe(failure);
    expect(outcomes()).toEqual(['coordinator_down', 'failed']);
  });

  it('keeps the work running through failed renewals while the lease can still be valid', async () => {
    const flight = new SingleFlight(coordinator, {
      leaseTtl: 900,
      events: (event) => events.push(event),
    });
    let signal: AbortSignal | undefined;
    const result = await flight.run('k', async (context) => {
      signal = context.signal;
      coordinator.down = true;
      await until(() => coordinator.calls.renew === 1);
      await until(() => outcomes().includes('coordinator_down'));
      coordinator.down = false;
      return 'survived';
    });
    expect(result).toEqual({ value: 'survived', source: 'executed' });
    expect(signal!.aborted).toBe(false);
    expect(outcomes()).toEqual(['coordinator_down', 'executed']);
  });

  it('aborts the work once renewals kept failing until the lease ran out', async () => {
    const flight = new SingleFlight(coordinator, { leaseTtl: 60 });
    const { error } = await settle(
      flight.run('k', async ({ signal }) => {
        coordinator.down = true;
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        coordinator.down = false;
        signal.throwIfAborted();
      }),
    );
    expect(error).toMatchObject({ code: 'lease_lost', identity: 'k' });
    expect(coordinator.calls.renew).toBeGreaterThan(0);
  });

  it('aborts the work when renewals hang until the lease ran out', async () => {
    const flight = new SingleFlight(coordinator, { leaseTtl: 60 });
    const { error } = await settle(
      flight.run('k', async ({ signal }) => {
        coordinator.stallRenewals = true;
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        signal.throwIfAborted();
      }),
    );
    expect(error).toMatchObject({ code: 'lease_lost', identity: 'k' });
    expect(coordinator.calls.renew).toBe(1);
  });
});
