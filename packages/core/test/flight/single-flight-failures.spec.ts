import {
  InMemoryFlightCoordinator,
  ResultTooLargeError,
  SharedFlightError,
  SingleFlight,
  type OncelyEvent,
  type SingleFlightOptions,
} from '@oncely/core';
import { HttpStatusFailurePolicy } from '@oncely/core/adapter';
import { HttpError, deferred, settle, until } from './flight-test-helpers.js';
import { InstrumentedCoordinator } from './instrumented-coordinator.js';
import { ManualClock } from './manual-clock.js';

/** Only the completion notice wakes these followers, so every wake-up is one the test caused. */
const noticeDriven: SingleFlightOptions = { backoff: { initial: 60_000, max: 60_000 } };

/** Shares what HTTP calls the same request would get again: deterministic 4xx. */
const httpStatuses: SingleFlightOptions = { failurePolicy: new HttpStatusFailurePolicy() };

describe('SingleFlight failures and stored outcomes', () => {
  let clock: ManualClock;
  let memory: InMemoryFlightCoordinator;
  let coordinator: InstrumentedCoordinator;

  beforeEach(() => {
    clock = new ManualClock();
    memory = new InMemoryFlightCoordinator({ clock });
    coordinator = new InstrumentedCoordinator(memory);
  });

  afterEach(() => memory.close());

  /** Starts `work` on a leader node and parks `followers` nodes waiting on the same key. */
  async function leaderWithFollowers<T>(
    work: () => Promise<T>,
    followers: number,
    options: SingleFlightOptions = {},
  ) {
    const leader = new SingleFlight(coordinator, { ...noticeDriven, ...options });
    const acquiredBefore = coordinator.calls.acquire;
    const leading = settle(leader.run('k', work));
    await until(() => coordinator.calls.acquire === acquiredBefore + 1);
    const following = Array.from({ length: followers }, () =>
      settle(new SingleFlight(coordinator, { ...noticeDriven, ...options }).run('k', work)),
    );
    await until(() => coordinator.pendingWaits === followers);
    return { leading, following };
  }

  it('shares no failure by default: a waiter runs the work again, and nothing stays cached', async () => {
    const gate = deferred();
    let executions = 0;
    const work = async (): Promise<string> => {
      executions += 1;
      await gate.promise;
      throw new HttpError(400, 'Invalid amount');
    };
    const { leading, following } = await leaderWithFollowers(work, 2, {
      errorTtl: 3_000,
      handoffTtl: 500,
    });
    gate.resolve();

    expect((await leading).error).toMatchObject({ status: 400 });
    const errors = (await Promise.all(following)).map(({ error }) => error);
    expect(executions).toBe(2);
    expect(errors.filter((error) => error instanceof HttpError)).toHaveLength(1);
    expect(errors.filter((error) => error instanceof SharedFlightError)).toHaveLength(1);
    clock.advance(500);
    await expect(new SingleFlight(coordinator).run('k', async () => 'fixed')).resolves.toEqual({
      value: 'fixed',
      source: 'executed',
    });
  });

  it('shares a deterministic error with waiters and caches it for errorTtl', async () => {
    const gate = deferred();
    let executions = 0;
    const body = { message: ['amount must be positive'] };
    const original = new HttpError(400, 'Invalid amount', body);
    const work = async (): Promise<string> => {
      executions += 1;
      await gate.promise;
      throw original;
    };
    const { leading, following } = await leaderWithFollowers(work, 2, {
      errorTtl: 3_000,
      ...httpStatuses,
    });
    gate.resolve();

    expect((await leading).error).toBe(original);
    for (const { error } of await Promise.all(following)) {
      expect(error).toBeInstanceOf(SharedFlightError);
      expect(error).toMatchObject({ status: 400, body, message: 'Invalid amount' });
    }
    const cached = await settle(new SingleFlight(coordinator, httpStatuses).run('k', work));
    expect(cached.error).toBeInstanceOf(SharedFlightError);
    expect(executions).toBe(1);

    clock.advance(3_000);
    await settle(new SingleFlight(coordinator, httpStatuses).run('k', work));
    expect(executions).toBe(2);
  });

  it('lets exactly one waiter run the work again after a transient error', async () => {
    const gate = deferred();
    let executions = 0;
    const work = async () => {
      executions += 1;
      if (executions === 1) {
        await gate.promise;
        throw new HttpError(503, 'upstream unavailable');
      }
      return `attempt ${executions}`;
    };
    const { leading, following } = await leaderWithFollowers(work, 4);
    gate.resolve();

    expect((await leading).error).toMatchObject({ status: 503 });
    const results = (await Promise.all(following)).map(({ value }) => value);
    expect(executions).toBe(2);
    expect(results.map((result) => result?.value)).toEqual(Array(4).fill('attempt 2'));
    expect(results.filter((result) => result?.source === 'executed')).toHaveLength(1);
    expect(results.filter((result) => result?.source === 'shared')).toHaveLength(3);
  });

  it('shares a failed retry with the other waiters: two executions, not one per waiter', async () => {
    const gate = deferred();
    let executions = 0;
    const work = async (): Promise<string> => {
      executions += 1;
      const attempt = executions;
      if (attempt === 1) await gate.promise;
      throw new HttpError(503, `upstream unavailable (attempt ${attempt})`);
    };
    const { leading, following } = await leaderWithFollowers(work, 4);
    gate.resolve();

    expect((await leading).error).toMatchObject({ message: 'upstream unavailable (attempt 1)' });
    const errors = (await Promise.all(following)).map(({ error }) => error);
    expect(executions).toBe(2);
    expect(errors.filter((error) => error instanceof HttpError)).toEqual([
      expect.objectContaining({ message: 'upstream unavailable (attempt 2)' }),
    ]);
    const shared = errors.filter((error) => error instanceof SharedFlightError);
    expect(shared).toHaveLength(3);
    for (const error of shared) {
      expect(error).toMatchObject({ message: 'upstream unavailable (attempt 2)', status: 500 });
    }
  });

  it('lets a caller that arrives after a shared retry failure lead once handoffTtl is over', async () => {
    const gate = deferred();
    let executions = 0;
    const work = async (): Promise<string> => {
      executions += 1;
      if (executions === 1) await gate.promise;
      if (executions <= 2) throw new HttpError(503, 'upstream unavailable');
      return `attempt ${executions}`;
    };
    const { leading, following } = await leaderWithFollowers(work, 2, { handoffTtl: 500 });
    gate.resolve();
    await leading;
    await Promise.all(following);
    expect(executions).toBe(2);

    const late = settle(new SingleFlight(coordinator, { handoffTtl: 500 }).run('k', work));
    await until(() => coordinator.calls.acquire >= 5);
    expect(executions).toBe(2);
    clock.advance(500);
    expect((await late).value).toEqual({ value: 'attempt 3', source: 'executed' });
  });

  it('in one process too, of the callers joined when the leader fails, one runs again and the others share its failure', async () => {
    const gate = deferred();
    let executions = 0;
    const work = async (): Promise<string> => {
      executions += 1;
      const attempt = executions;
      if (attempt === 1) await gate.promise;
      throw new HttpError(503, `upstream unavailable (attempt ${attempt})`);
    };
    const flight = new SingleFlight(coordinator, noticeDriven);
    const calls = Array.from({ length: 5 }, () => settle(flight.run('k', work)));
    await until(() => executions === 1);
    gate.resolve();

    const errors = (await Promise.all(calls)).map(({ error }) => (error as Error).message);
    expect(executions).toBe(2);
    expect(errors).toEqual([
      'upstream unavailable (attempt 1)',
      ...Array(4).fill('upstream unavailable (attempt 2)'),
    ]);
  });

  it("in one process, all joiners get the retry's result when it succeeds", async () => {
    const gate = deferred();
    let executions = 0;
    const work = async (): Promise<string> => {
      executions += 1;
      if (executions === 1) {
        await gate.promise;
        throw new HttpError(503, 'upstream unavailable');
      }
      return `attempt ${executions}`;
    };
    const flight = new SingleFlight(coordinator, noticeDriven);
    const calls = Array.from({ length: 5 }, () => settle(flight.run('k', work)));
    await until(() => executions === 1);
    gate.resolve();

    const results = await Promise.all(calls);
    expect(executions).toBe(2);
    expect(results[0]!.error).toMatchObject({ status: 503 });
    expect(results.slice(1).map(({ value }) => value)).toEqual([
      { value: 'attempt 2', source: 'executed' },
      ...Array(3).fill({ value: 'attempt 2', source: 'joined' }),
    ]);
  });

  it('hands a resultTtl 0 result to the waiters, then stores nothing past handoffTtl', async () => {
    const gate = deferred();
    let executions = 0;
    const work = async () => {
      executions += 1;
      await gate.promise;
      return executions;
    };
    const { leading, following } = await leaderWithFollowers(work, 2, {
      resultTtl: 0,
      handoffTtl: 500,
    });
    gate.resolve();

    expect((await leading).value).toEqual({ value: 1, source: 'executed' });
    for (const { value } of await Promise.all(following)) {
      expect(value).toEqual({ value: 1, source: 'shared' });
    }
    clock.advance(500);
    expect(await new SingleFlight(coordinator).run('k', work, { resultTtl: 0 })).toEqual({
      value: 2,
      source: 'executed',
    });
    expect(executions).toBe(2);
  });

  it('with handoffTtl 0 and resultTtl 0, a waiter runs the work again', async () => {
    const gate = deferred();
    let executions = 0;
    const work = async () => {
      executions += 1;
      if (executions === 1) await gate.promise;
      return executions;
    };
    const { leading, following } = await leaderWithFollowers(work, 1, {
      resultTtl: 0,
      handoffTtl: 0,
    });
    gate.resolve();
    await leading;
    expect((await following[0]!).value).toEqual({ value: 2, source: 'executed' });
    expect(memory.size).toBe(0);
  });

  it('keeps a result for resultTtl', async () => {
    let executions = 0;
    const work = async () => ++executions;
    const flight = new SingleFlight(coordinator, { resultTtl: 5_000 });
    await flight.run('k', work);
    clock.advance(4_999);
    expect(await flight.run('k', work)).toEqual({ value: 1, source: 'cached' });
    clock.advance(1);
    expect(await flight.run('k', work)).toEqual({ value: 2, source: 'executed' });
  });

  it('carries Buffer and Date results to other nodes intact', async () => {
    const at = new Date('2025-01-02T03:04:05.006Z');
    const gate = deferred();
    const work = async () => {
      await gate.promise;
      return { pdf: Buffer.from('%PDF-1.7\u0000'), at, pages: [{ at }] };
    };
    const { following } = await leaderWithFollowers(work, 1);
    gate.resolve();
    const shared = (await following[0]!).value!;
    expect(shared.source).toBe('shared');
    expect(Buffer.isBuffer(shared.value.pdf)).toBe(true);
    expect(shared.value.pdf.toString()).toBe('%PDF-1.7\u0000');
    expect(shared.value.pages[0]!.at).toEqual(at);
  });

  it('returns a result above maxResultBytes to its caller, gives waiters the error, stores nothing', async () => {
    const events: OncelyEvent[] = [];
    const gate = deferred();
    let executions = 0;
    const work = async () => {
      executions += 1;
      await gate.promise;
      return 'x'.repeat(1_000);
    };
    const leader = new SingleFlight(coordinator, {
      ...noticeDriven,
      maxResultBytes: 500,
      handoffTtl: 500,
      events: (event) => events.push(event),
    });
    const leading = leader.run('k', work);
    await until(() => executions === 1);
    const following = settle(new SingleFlight(coordinator, noticeDriven).run('k', work));
    await until(() => coordinator.pendingWaits === 1);
    gate.resolve();

    expect(await leading).toEqual({ value: 'x'.repeat(1_000), source: 'executed' });
    expect(events[0]).toMatchObject({ outcome: 'executed' });
    expect(events[0]!.error).toBeInstanceOf(ResultTooLargeError);
    const { error } = await following;
    expect(error).toBeInstanceOf(SharedFlightError);
    expect(error).toMatchObject({
      originalName: 'ResultTooLargeError',
      originalCode: 'result_too_large',
    });

    clock.advance(500);
    await new SingleFlight(coordinator, { maxResultBytes: 5_000 }).run('k', work);
    expect(executions).toBe(2);
  });

  it('shares a deterministic error without its body when the body is too large', async () => {
    const gate = deferred();
    const work = async (): Promise<string> => {
      await gate.promise;
      throw new HttpError(422, 'Unprocessable', { dump: 'y'.repeat(2_000) });
    };
    const { following } = await leaderWithFollowers(work, 1, {
      maxResultBytes: 500,
      ...httpStatuses,
    });
    gate.resolve();
    const { error } = await following[0]!;
    expect(error).toBeInstanceOf(SharedFlightError);
    expect(error).toMatchObject({ status: 422, message: 'Unprocessable', body: undefined });
  });

  it('treats an error the failure policy cannot classify as transient', async () => {
    const flight = new SingleFlight(coordinator, {
      failurePolicy: {
        classify: () => {
          throw new Error('policy bug');
        },
        serialize: (error) => error,
        deserialize: () => new Error('never'),
      },
    });
    const outcome = await settle(
      flight.run('k', async () => {
        throw new HttpError(400, 'bad');
      }),
    );
    expect(outcome.error).toMatchObject({ status: 400 });
    expect(coordinator.calls.release).toBe(1);
    expect(memory.size).toBe(0);
  });
});
