import { jest } from '@jest/globals';
import {
  ForeignOwnerError,
  InMemoryFlightCoordinator,
  SharedFlightError,
  SingleFlight,
  type OncelyEvent,
} from '@oncely/core';
import { HttpStatusFailurePolicy } from '@oncely/core/adapter';
import {
  callerPeeksFirst,
  decodesHeldResultsOnce,
} from '../../src/flight/executor-flight-marks.js';
import { HttpError, deferred } from './flight-test-helpers.js';
import { ManualClock } from './manual-clock.js';

describe('SingleFlight: a result held in this process (peek)', () => {
  let coordinator: InMemoryFlightCoordinator;

  beforeEach(() => {
    coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
  });

  afterEach(() => coordinator.close());

  function flightOf(options: { service?: string; ownerId?: () => string } = {}) {
    const events: OncelyEvent[] = [];
    const flight = new SingleFlight(coordinator, {
      failurePolicy: new HttpStatusFailurePolicy(),
      ...options,
      events: (event) => events.push(event),
    });
    return { flight, events };
  }

  it('answers a cached hit with no owner token and no acquire, a fresh copy each time, reported as cached', async () => {
    let tokens = 0;
    const { flight, events } = flightOf({ ownerId: () => `owner-${(tokens += 1)}` });
    let runs = 0;
    const work = async () => ({ rows: [1, 2], run: (runs += 1) });
    await flight.run('report:1', work, { operation: 'shop:report:v1' });
    const acquire = jest.spyOn(coordinator, 'acquire');
    const before = tokens;

    const first = await flight.run('report:1', work, { operation: 'shop:report:v1' });
    first.value.rows.push(3);
    const second = flight.peek<{ rows: number[] }>('report:1', { operation: 'shop:report:v1' });

    expect(runs).toBe(1);
    expect(first).toEqual({ value: { rows: [1, 2, 3], run: 1 }, source: 'cached' });
    expect(second).toEqual({ value: { rows: [1, 2], run: 1 }, source: 'cached' });
    expect(acquire).not.toHaveBeenCalled();
    expect(tokens).toBe(before);
    expect(events.map((event) => [event.outcome, event.operation])).toEqual([
      ['executed', 'shop:report:v1'],
      ['cached', 'shop:report:v1'],
      ['cached', 'shop:report:v1'],
    ]);
  });

  it('holds nothing for an unknown key, a running flight or a held error, which run decides', async () => {
    const { flight } = flightOf();
    expect(flight.peek('report:none')).toBeUndefined();

    const gate = deferred();
    const running = flight.run('report:2', async () => {
      await gate.promise;
      return 'done';
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(flight.peek('report:2')).toBeUndefined();
    gate.resolve();
    await running;
    expect(flight.peek('report:2')).toEqual({ value: 'done', source: 'cached' });

    const invalid = new HttpError(400, 'bad input');
    await expect(
      flight.run('report:3', async () => {
        throw invalid;
      }),
    ).rejects.toBe(invalid);
    expect(coordinator.peek('report:3')?.kind).toBe('failed');
    expect(flight.peek('report:3')).toBeUndefined();
    await expect(flight.run('report:3', async () => 'again')).rejects.toBeInstanceOf(
      SharedFlightError,
    );
  });

  it('holds no result of another service: run refuses it, unless the operation is shared', async () => {
    const billing = flightOf({ service: 'billing' });
    await billing.flight.run('invoice:1', async () => 'billing-only');
    const { flight, events } = flightOf({ service: 'shipping' });

    expect(flight.peek('invoice:1')).toBeUndefined();
    await expect(flight.run('invoice:1', async () => 'mine')).rejects.toBeInstanceOf(
      ForeignOwnerError,
    );
    expect(flight.peek('invoice:1', { shared: true })).toEqual({
      value: 'billing-only',
      source: 'cached',
    });
    expect(events.map((event) => event.outcome)).toEqual(['foreign_owner', 'cached']);
  });

  it('throws and reports a held result that does not decode, as run would', async () => {
    const { flight, events } = flightOf();
    const owner = 'owner-x';
    expect((await coordinator.acquire('report:4', owner, 10_000)).kind).toBe('leader');
    await coordinator.complete('report:4', owner, {
      kind: 'result',
      payload: '#not json',
      ttlMs: 10_000,
    });

    expect(() => flight.peek('report:4')).toThrow();
    expect(events.map((event) => event.outcome)).toEqual(['failed']);
  });

  it("leaves the peek to the caller of an engine marked callerPeeksFirst: run asks the coordinator's held outcomes not at all", async () => {
    const { flight } = flightOf();
    callerPeeksFirst(flight);
    await flight.run('report:5', async () => 'kept');
    const peek = jest.spyOn(coordinator, 'peek');
    const acquire = jest.spyOn(coordinator, 'acquire');

    expect(await flight.run('report:5', async () => 'again')).toEqual({
      value: 'kept',
      source: 'cached',
    });
    expect(peek).not.toHaveBeenCalled();
    expect(acquire).toHaveBeenCalledTimes(1);
  });

  it('hands every hit on one held result the value decoded on the first, for an engine marked decodesHeldResultsOnce, and decodes the next result held anew', async () => {
    const clock = new ManualClock();
    const expiring = new InMemoryFlightCoordinator({ clock, sweepInterval: 0 });
    const flight = decodesHeldResultsOnce(new SingleFlight(expiring));
    const parse = jest.spyOn(JSON, 'parse');
    await flight.run('report:6', async () => ({ rows: [1] }), { resultTtl: 10_000 });

    const first = flight.peek<{ rows: number[] }>('report:6');
    const second = flight.peek<{ rows: number[] }>('report:6');
    const parsedForHits = parse.mock.calls.length;
    clock.advance(10_000);
    await flight.run('report:6', async () => ({ rows: [2] }), { resultTtl: 10_000 });
    const third = flight.peek<{ rows: number[] }>('report:6');
    parse.mockRestore();
    await expiring.close();

    expect(first?.value).toEqual({ rows: [1] });
    expect(second?.value).toBe(first?.value);
    expect(parsedForHits).toBe(1);
    expect(third?.value).toEqual({ rows: [2] });
  });
});
