import { InMemoryFlightCoordinator, SingleFlight, type FlightRunOptions } from '@oncely/core';
import { deferred, until } from './flight-test-helpers.js';
import { InstrumentedCoordinator } from './instrumented-coordinator.js';

const READER: FlightRunOptions = { neverLead: true, resultTtl: 60_000 };
const WRITER: FlightRunOptions = { resultTtl: 60_000 };

/** Work answering `run <n>` for its n-th execution; the first waits until `gate` resolves. */
function countedWork() {
  const gate = deferred();
  let executions = 0;
  const work = async () => {
    const execution = (executions += 1);
    if (execution === 1) await gate.promise;
    return `run ${execution}`;
  };
  return { work, gate, executions: () => executions };
}

describe('SingleFlight: a caller that never leads (neverLead)', () => {
  let memory: InMemoryFlightCoordinator;
  let coordinator: InstrumentedCoordinator;
  let flight: SingleFlight;

  beforeEach(() => {
    memory = new InMemoryFlightCoordinator();
    coordinator = new InstrumentedCoordinator(memory);
    flight = new SingleFlight(coordinator);
  });

  afterEach(() => memory.close());

  it('where it would lead, lets the lease go at once, runs its work and stores nothing', async () => {
    const { work, gate } = countedWork();
    gate.resolve();

    const read = await flight.run('k', work, READER);
    const written = await flight.run('k', work, WRITER);

    expect(read).toEqual({ value: 'run 1', source: 'executed' });
    expect(written).toEqual({ value: 'run 2', source: 'executed' });
    expect(coordinator.calls).toMatchObject({ acquire: 2, release: 1, complete: 1, renew: 0 });
  });

  it('reads the result another caller kept', async () => {
    const { work, gate, executions } = countedWork();
    gate.resolve();

    await flight.run('k', work, WRITER);
    const read = await flight.run('k', work, READER);

    expect(read).toEqual({ value: 'run 1', source: 'cached' });
    expect(executions()).toBe(1);
  });

  it('joins a flight running in this process', async () => {
    const { work, gate, executions } = countedWork();

    const writer = flight.run('k', work, WRITER);
    await until(() => executions() === 1);
    const reader = flight.run('k', work, READER);
    gate.resolve();

    expect(await writer).toEqual({ value: 'run 1', source: 'executed' });
    expect(await reader).toEqual({ value: 'run 1', source: 'joined' });
    expect(executions()).toBe(1);
  });

  it('is joined by nobody: a caller arriving while its work runs leads a flight of its own', async () => {
    const { work, gate, executions } = countedWork();

    const reader = flight.run('k', work, READER);
    await until(() => executions() === 1);
    const writer = await flight.run('k', work, WRITER);
    gate.resolve();

    expect(writer).toEqual({ value: 'run 2', source: 'executed' });
    expect(await reader).toEqual({ value: 'run 1', source: 'executed' });
    expect(await flight.run('k', work, WRITER)).toEqual({ value: 'run 2', source: 'cached' });
  });

  it('follows a lease held on another node and shares its result', async () => {
    const other = new SingleFlight(coordinator);
    const { work, gate, executions } = countedWork();

    const writer = other.run('k', work, WRITER);
    await until(() => executions() === 1);
    const reader = flight.run('k', work, READER);
    await until(() => coordinator.pendingWaits === 1);
    gate.resolve();

    expect(await writer).toEqual({ value: 'run 1', source: 'executed' });
    expect(await reader).toEqual({ value: 'run 1', source: 'shared' });
    expect(executions()).toBe(1);
  });
});
