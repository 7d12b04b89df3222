import { createHook } from 'node:async_hooks';
import {
  FlightBusyError,
  InMemoryFlightCoordinator,
  InvalidFlightOptionError,
  SingleFlight,
  type SingleFlightOptions,
} from '@oncely/core';
import { HttpStatusFailurePolicy } from '@oncely/core/adapter';
import { HttpError, deferred, settle, until } from './flight-test-helpers.js';
import { InstrumentedCoordinator } from './instrumented-coordinator.js';
import { ManualClock } from './manual-clock.js';

describe('SingleFlight housekeeping', () => {
  let clock: ManualClock;
  let memory: InMemoryFlightCoordinator;
  let coordinator: InstrumentedCoordinator;

  beforeEach(() => {
    clock = new ManualClock();
    memory = new InMemoryFlightCoordinator({ clock, sweepInterval: 0 });
    coordinator = new InstrumentedCoordinator(memory);
  });

  afterEach(() => memory.close());

  it('leaves no flight, notice wait or timer behind once flights are over', async () => {
    const timers = liveTimers();
    const flight = new SingleFlight(coordinator, { leaseTtl: 600, resultTtl: 0, handoffTtl: 0 });
    const failing = new SingleFlight(coordinator, { leaseTtl: 600 });

    await Promise.all(
      Array.from({ length: 200 }, (_, index) => flight.run(`ok:${index}`, async () => index)),
    );
    await settle(failing.run('bad', async () => Promise.reject(new HttpError(400, 'bad'))));
    await settle(failing.run('boom', async () => Promise.reject(new Error('boom'))));
    const gate = deferred();
    const leading = flight.run('busy', () => gate.promise.then(() => 'v'));
    await until(() => coordinator.pendingWaits === 0 && flight.inFlight === 1);
    const waiting = new SingleFlight(coordinator).run('busy', async () => 'w');
    const rejected = settle(
      new SingleFlight(coordinator, { onBusy: 'reject' }).run('busy', async () => 'r'),
    );
    const timedOut = settle(
      new SingleFlight(coordinator).run('busy', async () => 't', { wait: 5 }),
    );
    await until(() => coordinator.pendingWaits === 1 && coordinator.calls.renew > 0);
    gate.resolve();
    await Promise.all([leading, waiting, rejected, timedOut]);
    expect((await timedOut).error).toBeInstanceOf(FlightBusyError);

    expect(flight.inFlight).toBe(0);
    expect(failing.inFlight).toBe(0);
    expect(coordinator.pendingWaits).toBe(0);
    expect(memory.waitingKeys).toBe(0);
    expect(await timers.stop()).toEqual([]);
    // The waiter found nothing handed off (handoffTtl 0), led, and stored its own result.
    expect((await waiting).source).toBe('executed');
    clock.advance(60_000);
    memory.sweep();
    expect(memory.size).toBe(0);
  });

  it('keeps no coordinator state for 1 000 distinct resultTtl 0 keys after handoffTtl', async () => {
    const flight = new SingleFlight(coordinator, { resultTtl: 0, handoffTtl: 200 });
    await Promise.all(
      Array.from({ length: 1_000 }, (_, index) => flight.run(`key:${index}`, async () => index)),
    );
    expect(flight.inFlight).toBe(0);
    expect(memory.size).toBe(1_000);
    clock.advance(200);
    memory.sweep();
    expect(memory.size).toBe(0);
  });

  describe('events', () => {
    it('ignores listeners that throw or reject', async () => {
      const seen: string[] = [];
      const flight = new SingleFlight(coordinator, {
        events: [
          () => {
            throw new Error('listener bug');
          },
          async () => Promise.reject(new Error('async listener bug')),
          (event) => seen.push(event.outcome),
        ],
      });
      expect(await flight.run('k', async () => 'v')).toEqual({ value: 'v', source: 'executed' });
      expect(await flight.run('k', async () => 'w')).toEqual({ value: 'v', source: 'cached' });
      expect(seen).toEqual(['executed', 'cached']);
    });

    it('reports a shared deterministic error as failed, with the error and a duration', async () => {
      const failure = new HttpError(404, 'not found');
      const events: unknown[] = [];
      const flight = new SingleFlight(coordinator, {
        events: (event) => events.push(event),
        failurePolicy: new HttpStatusFailurePolicy(),
      });
      await settle(flight.run('k', async () => Promise.reject(failure)));
      await settle(flight.run('k', async () => 'never'));
      expect(events).toEqual([
        expect.objectContaining({ outcome: 'failed', error: failure, key: 'k' }),
        expect.objectContaining({
          outcome: 'failed',
          error: expect.objectContaining({ status: 404 }),
        }),
      ]);
      for (const event of events as { durationMs: number }[]) {
        expect(event.durationMs).toBeGreaterThanOrEqual(0);
      }
    });
  });

  describe('options', () => {
    it.each<[string, SingleFlightOptions]>([
      ['leaseTtl', { leaseTtl: 0 }],
      ['leaseTtl', { leaseTtl: 1.5 }],
      ['wait', { wait: -1 }],
      ['resultTtl', { resultTtl: Number.NaN }],
      ['errorTtl', { errorTtl: -5 }],
      ['onBusy', { onBusy: 'queue' as 'wait' }],
      ['onCoordinatorDown', { onCoordinatorDown: 'half-open' as 'open' }],
      ['failurePolicy', { failurePolicy: { classify: () => 'transient' } as never }],
      ['maxResultBytes', { maxResultBytes: 0 }],
      ['handoffTtl', { handoffTtl: -1 }],
      ['backoff.initial', { backoff: { initial: 0 } }],
      ['backoff.max', { backoff: { initial: 100, max: 50 } }],
      ['events', { events: 'log' as never }],
      ['ownerId', { ownerId: 'me' as never }],
    ])('refuses a bad %s, naming it', (option, options) => {
      const attempt = () => new SingleFlight(coordinator, options);
      expect(attempt).toThrow(InvalidFlightOptionError);
      expect(attempt).toThrow(expect.objectContaining({ option }));
      expect(attempt).toThrow(`"${option}"`);
    });

    it('refuses a bad per-run option without running anything', async () => {
      let executions = 0;
      const flight = new SingleFlight(coordinator);
      const { error } = await settle(flight.run('k', async () => ++executions, { leaseTtl: -1 }));
      expect(error).toBeInstanceOf(InvalidFlightOptionError);
      expect(error).toMatchObject({ option: 'leaseTtl', value: -1 });
      expect(executions).toBe(0);
      expect(coordinator.calls.acquire).toBe(0);
    });
  });
});

/**
 * Tracks timers oncely creates from now on (the runner's own are left out), until `stop`
 * returns where the ones still pending were created.
 */
function liveTimers() {
  const live = new Map<number, string>();
  const hook = createHook({
    init(asyncId, type) {
      if (type !== 'Timeout') return;
      const stack = new Error().stack ?? '';
      if (stack.includes('/packages/core/src/')) live.set(asyncId, stack);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    async stop(): Promise<string[]> {
      // Destroy hooks of just-cleared timers run asynchronously.
      for (let round = 0; round < 3; round += 1) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      hook.disable();
      return [...live.values()];
    },
  };
}
