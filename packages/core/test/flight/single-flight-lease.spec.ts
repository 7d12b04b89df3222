import {
  FlightBusyError,
  InMemoryFlightCoordinator,
  LeaseLostError,
  SingleFlight,
  type FlightContext,
  type OncelyEvent,
} from '@oncely/core';
import { deferred, settle, sleep, until } from './flight-test-helpers.js';
import { InstrumentedCoordinator } from './instrumented-coordinator.js';

describe('SingleFlight lease', () => {
  let memory: InMemoryFlightCoordinator;
  let coordinator: InstrumentedCoordinator;

  beforeEach(() => {
    memory = new InMemoryFlightCoordinator();
    coordinator = new InstrumentedCoordinator(memory);
  });

  afterEach(() => memory.close());

  it('keeps a job running 3x the lease TTL exclusive by renewing the lease', async () => {
    const leaseTtl = 500;
    let executions = 0;
    let working = true;
    const leading = new SingleFlight(coordinator, { leaseTtl }).run('k', async () => {
      executions += 1;
      await sleep(3 * leaseTtl);
      working = false;
      return 'long';
    });
    // Every attempt below comes after the lease as first granted would have expired.
    await sleep(1.5 * leaseTtl);
    const contender = new SingleFlight(coordinator, { leaseTtl, onBusy: 'reject' });
    const attempts: unknown[] = [];
    while (working) {
      attempts.push((await settle(contender.run('k', async () => ++executions))).error);
      await sleep(20);
    }

    expect(await leading).toEqual({ value: 'long', source: 'executed' });
    expect(executions).toBe(1);
    expect(attempts.length).toBeGreaterThan(0);
    // The last attempt may race the completion and find the cached result instead.
    for (const error of attempts.slice(0, -1)) expect(error).toBeInstanceOf(FlightBusyError);
    expect(coordinator.calls.renew).toBeGreaterThan(0);
  });

  it('aborts the work when the lease is deleted from outside, stores nothing, and says so', async () => {
    const events: OncelyEvent[] = [];
    const flight = new SingleFlight(coordinator, {
      leaseTtl: 90,
      ownerId: () => 'leader-owner',
      events: (event) => events.push(event),
    });
    let context: FlightContext | undefined;
    const running = deferred();
    const outcome = settle(
      flight.run('k', async (flightContext) => {
        context = flightContext;
        running.resolve();
        await new Promise((resolve) => flightContext.signal.addEventListener('abort', resolve));
        return 'finished anyway';
      }),
    );
    await running.promise;
    expect(await memory.release('k', 'leader-owner')).toBe(true);

    const { error } = await outcome;
    expect(error).toBeInstanceOf(LeaseLostError);
    expect(error).toMatchObject({ identity: 'k', fence: context!.fence });
    expect(context!.signal.aborted).toBe(true);
    expect(context!.signal.reason).toBe(error);
    expect(coordinator.calls.complete).toBe(0);
    expect((await memory.acquire('k', 'someone', 1_000)).kind).toBe('leader');
    expect(events.map((event) => event.outcome)).toEqual(['lease_lost']);
  });

  it('reports a lost lease as LeaseLostError whatever the aborted work throws', async () => {
    const flight = new SingleFlight(coordinator, { leaseTtl: 60, ownerId: () => 'owner' });
    const abortedWith = new Error('aborted by the signal');
    const outcome = settle(
      flight.run('k', async ({ signal }) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw abortedWith;
      }),
    );
    await until(() => coordinator.calls.acquire === 1);
    await memory.release('k', 'owner');
    const { error } = await outcome;
    expect(error).toBeInstanceOf(LeaseLostError);
    expect((error as LeaseLostError).cause).toBe(abortedWith);
    expect(coordinator.calls.release + coordinator.calls.complete).toBe(0);
  });

  it('fails the leader with LeaseLostError when complete finds another owner', async () => {
    const flight = new SingleFlight(coordinator, { leaseTtl: 10_000, ownerId: () => 'first' });
    const gate = deferred();
    const outcome = settle(flight.run('k', () => gate.promise.then(() => 'late')));
    await until(() => coordinator.calls.acquire === 1);
    await memory.release('k', 'first');
    expect((await memory.acquire('k', 'second', 10_000)).kind).toBe('leader');
    gate.resolve();

    expect((await outcome).error).toBeInstanceOf(LeaseLostError);
    expect(coordinator.calls.complete).toBe(1);
    expect(
      await memory.complete('k', 'second', { kind: 'result', payload: '"2"', ttlMs: 1_000 }),
    ).toBe(true);
  });

  it('hands the leader a fence above every earlier leader of the key', async () => {
    const flight = new SingleFlight(coordinator, { resultTtl: 0, handoffTtl: 0 });
    const fences: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      await flight.run('k', async ({ fence }) => fences.push(fence));
    }
    expect(fences).toEqual([...fences].sort((a, b) => a - b));
    expect(new Set(fences).size).toBe(5);
    expect(fences[0]).toBeGreaterThan(0);
  });
});
