import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
  RecordStoreUnavailableError,
} from '@oncely/core';
import type {
  ProtectedRoute,
  ResolvedIdempotentRoute,
  ValueCallResult,
} from '@oncely/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { StandbyRegistry, type StandbyAttempt } from '../../src/method/standby.registry.js';

const IDENTITY = 'job:execute:v1:daily-settlement:2026-11-24';

function routeOf(idempotent?: Partial<ResolvedIdempotentRoute>): ProtectedRoute {
  return {
    name: 'SettlementJob.run (provider method)',
    ...(idempotent && {
      idempotent: { leaseTtl: 40, retention: 60_000, ...idempotent } as ResolvedIdempotentRoute,
    }),
  };
}

const refusal = (retryAfterMs = 20) => new IdempotencyConflictError(IDENTITY, retryAfterMs);
const replayed: ValueCallResult = { value: 'run', replayed: true };
const executed: ValueCallResult = { value: 'run', replayed: false };

/** An attempt answering each call with the next outcome (a result, or an error to throw). */
function attempts(...outcomes: Array<ValueCallResult | Error | 'runs'>) {
  const calls: number[] = [];
  const attempt: StandbyAttempt = async (onRun) => {
    const outcome = outcomes[calls.length] ?? replayed;
    calls.push(performance.now());
    if (outcome === 'runs') {
      onRun();
      throw new Error('the settlement failed');
    }
    if (outcome instanceof Error) throw outcome;
    if (!outcome.replayed) onRun();
    return outcome;
  };
  return { attempt, calls };
}

async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error('still waiting');
    await sleep(10);
  }
}

describe('StandbyRegistry', () => {
  let registry: StandbyRegistry;
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);

  beforeEach(() => {
    registry = new StandbyRegistry();
    warn.mockClear();
    log.mockClear();
  });

  afterEach(() => registry.close());

  it('calls a refused method again once the lease would end, and ends on the replay', async () => {
    const { attempt, calls } = attempts(replayed);
    const refusedAt = performance.now();
    registry.keep(refusal(100), routeOf({}), attempt);
    expect(registry.size).toBe(1);
    await until(() => registry.size === 0);
    expect(calls).toHaveLength(1);
    expect(calls[0]! - refusedAt).toBeGreaterThanOrEqual(99);
    expect(log).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  it('keeps one standby per identity', async () => {
    const first = attempts(replayed);
    const second = attempts(replayed);
    registry.keep(refusal(), routeOf({}), first.attempt);
    registry.keep(refusal(), routeOf({}), second.attempt);
    expect(registry.size).toBe(1);
    await until(() => registry.size === 0);
    expect(first.calls).toHaveLength(1);
    expect(second.calls).toHaveLength(0);
  });

  it('keeps at most maxStandbys, warning about each refusal past them', async () => {
    const bounded = new StandbyRegistry(2);
    try {
      const calls = [attempts(replayed), attempts(replayed), attempts(replayed)];
      calls.forEach(({ attempt }, index) =>
        bounded.keep(
          new IdempotencyConflictError(`${IDENTITY}-${index}`, 20),
          routeOf({}),
          attempt,
        ),
      );
      expect(bounded.size).toBe(2);
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining(`no standby for ${IDENTITY}-2, since 2 standbys wait already`),
      );
      await until(() => bounded.size === 0);
      expect(calls.map(({ calls: made }) => made.length)).toEqual([1, 1, 0]);
    } finally {
      await bounded.close();
    }
  });

  it('waits again while the run is still in flight, and runs the method once its lease ran out', async () => {
    const { attempt, calls } = attempts(refusal(30), refusal(30), executed);
    registry.keep(refusal(), routeOf({}), attempt);
    await until(() => registry.size === 0);
    expect(calls).toHaveLength(3);
    expect(log).toHaveBeenCalledWith(expect.stringContaining(`ran ${IDENTITY} here`));
  });

  it("ends with its own run's failure, and calls no more", async () => {
    const { attempt, calls } = attempts('runs', replayed);
    registry.keep(refusal(), routeOf({}), attempt);
    await until(() => registry.size === 0);
    expect(calls).toHaveLength(1);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('the settlement failed'));
  });

  it('ends on a refusal other than in flight', async () => {
    const { attempt, calls } = attempts(new IdempotencyMismatchError(IDENTITY), replayed);
    registry.keep(refusal(), routeOf({}), attempt);
    await until(() => registry.size === 0);
    expect(calls).toHaveLength(1);
  });

  it('calls an unreachable store again while the method has not started here', async () => {
    const down = new RecordStoreUnavailableError('postgres');
    const { attempt, calls } = attempts(down, replayed);
    registry.keep(refusal(), routeOf({}), attempt);
    await until(() => registry.size === 0);
    expect(calls).toHaveLength(2);
  });

  it('gives up at the retention of the record', async () => {
    // The first wait (at most 300 ms with its jitter) fits in it, the second (1 s or more) not.
    const { attempt, calls } = attempts(refusal(1_000));
    registry.keep(refusal(20), routeOf({ retention: 800 }), attempt);
    await until(() => registry.size === 0);
    expect(calls).toHaveLength(1);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('retention (800 ms)'));
  });

  it('stands by only for idempotent routes: a SingleFlight alone has no record to take over', () => {
    registry.keep(refusal(), routeOf(), attempts().attempt);
    expect(registry.size).toBe(0);
  });

  it('cancels a waiting standby on close, and keeps none afterwards', async () => {
    const { attempt, calls } = attempts(replayed);
    registry.keep(refusal(100), routeOf({}), attempt);
    await registry.close();
    expect(registry.size).toBe(0);
    registry.keep(refusal(), routeOf({}), attempt);
    expect(registry.size).toBe(0);
    await sleep(500);
    expect(calls).toHaveLength(0);
  });

  it('waits on close for a standby calling right now, which then calls no more', async () => {
    let finish = (): void => undefined;
    let calls = 0;
    const attempt: StandbyAttempt = async (onRun) => {
      calls++;
      onRun();
      await new Promise<void>((resolve) => (finish = resolve));
      throw refusal(1);
    };
    registry.keep(refusal(1), routeOf({}), attempt);
    await until(() => calls === 1);
    let closed = false;
    const closing = registry.close().then(() => (closed = true));
    await sleep(50);
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(registry.size).toBe(0);
    expect(calls).toBe(1);
  });
});
