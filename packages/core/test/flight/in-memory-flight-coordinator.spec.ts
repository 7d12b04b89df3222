import {
  InMemoryCapacityError,
  InMemoryFlightCoordinator,
  InvalidFlightOptionError,
} from '@oncely/core';
import { flightCoordinatorContract, registerContractCases } from '@oncely/core/testing';
import { ManualClock } from './manual-clock.js';

describe('InMemoryFlightCoordinator', () => {
  describe('flight coordinator contract', () => {
    registerContractCases(
      flightCoordinatorContract(() => {
        const clock = new ManualClock();
        const coordinator = new InMemoryFlightCoordinator({ clock });
        return {
          coordinator,
          advance: async (ms) => clock.advance(ms),
          cleanup: () => coordinator.close(),
        };
      }),
      it,
    );
  });

  describe('memory', () => {
    let clock: ManualClock;
    let coordinator: InMemoryFlightCoordinator;

    beforeEach(() => {
      clock = new ManualClock();
      coordinator = new InMemoryFlightCoordinator({ clock, sweepInterval: 0 });
    });

    afterEach(() => coordinator.close());

    it('drops expired leases and outcomes of keys nobody touches again on sweep', async () => {
      for (let index = 0; index < 100; index += 1) {
        const key = `key-${index}`;
        await coordinator.acquire(key, 'owner', 100);
        if (index % 2 === 0) {
          await coordinator.complete(key, 'owner', { kind: 'result', payload: '1', ttlMs: 200 });
        }
      }
      expect(coordinator.size).toBe(100);
      clock.advance(150);
      coordinator.sweep();
      expect(coordinator.size).toBe(50);
      clock.advance(100);
      coordinator.sweep();
      expect(coordinator.size).toBe(0);
    });

    it('drops an expired key as soon as a call touches it', async () => {
      await coordinator.acquire('key', 'owner', 100);
      clock.advance(100);
      expect(await coordinator.renew('key', 'owner', 100)).toBe(false);
      expect(coordinator.size).toBe(0);
    });

    it('keeps nothing for a completion with ttl 0 or a release', async () => {
      await coordinator.acquire('a', 'owner', 1_000);
      await coordinator.complete('a', 'owner', { kind: 'result', payload: '1', ttlMs: 0 });
      await coordinator.acquire('b', 'owner', 1_000);
      await coordinator.release('b', 'owner');
      expect(coordinator.size).toBe(0);
    });

    it('forgets a notice wait once it ended, however it ended', async () => {
      const controller = new AbortController();
      const waits = [
        coordinator.waitForNotice('notified', 60_000),
        coordinator.waitForNotice('timed-out', 1),
        coordinator.waitForNotice('aborted', 60_000, controller.signal),
      ];
      expect(coordinator.waitingKeys).toBe(3);
      await coordinator.acquire('notified', 'owner', 1_000);
      await coordinator.release('notified', 'owner');
      controller.abort();
      await Promise.all(waits);
      expect(coordinator.waitingKeys).toBe(0);
    });

    it('sweeps on its own timer', async () => {
      const swept = new InMemoryFlightCoordinator({ clock, sweepInterval: 5 });
      try {
        await swept.acquire('key', 'owner', 100);
        clock.advance(100);
        while (swept.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
        expect(swept.size).toBe(0);
      } finally {
        await swept.close();
      }
    });

    it('rejects TTLs it cannot honour, naming them', async () => {
      await expect(coordinator.acquire('key', 'owner', 0)).rejects.toThrow(/"leaseTtlMs"/);
      await expect(
        coordinator.complete('key', 'owner', { kind: 'result', payload: '1', ttlMs: -1 }),
      ).rejects.toBeInstanceOf(InvalidFlightOptionError);
      expect(() => new InMemoryFlightCoordinator({ sweepInterval: 1.5 })).toThrow(
        /"sweepInterval"/,
      );
    });
  });

  describe('bound', () => {
    let clock: ManualClock;
    let coordinator: InMemoryFlightCoordinator;
    const result = (payload: string) => ({ kind: 'result' as const, payload, ttlMs: 60_000 });

    /** Leads and completes `key`, leaving its result cached. */
    async function cache(key: string): Promise<void> {
      expect(await coordinator.acquire(key, 'owner', 1_000)).toMatchObject({ kind: 'leader' });
      expect(await coordinator.complete(key, 'owner', result(key))).toBe(true);
    }

    beforeEach(() => {
      clock = new ManualClock();
      coordinator = new InMemoryFlightCoordinator({ clock, sweepInterval: 0, maxEntries: 3 });
    });

    afterEach(() => coordinator.close());

    it('drops the least recently used cached outcome to make room for a new key', async () => {
      await cache('a');
      await cache('b');
      await cache('c');
      // Reading `a` makes `b` the least recently used.
      expect(await coordinator.acquire('a', 'other', 1_000)).toEqual({
        kind: 'cached',
        payload: 'a',
      });

      await cache('d');

      expect(coordinator.size).toBe(3);
      expect(await coordinator.acquire('b', 'owner', 1_000)).toMatchObject({ kind: 'leader' });
      expect(coordinator.size).toBe(3);
      // `b` took the place of `c`, the least recently used after it.
      for (const key of ['a', 'd']) {
        expect(await coordinator.acquire(key, 'other', 1_000)).toEqual({
          kind: 'cached',
          payload: key,
        });
      }
      expect(await coordinator.acquire('c', 'owner', 1_000)).toMatchObject({ kind: 'leader' });
    });

    it('counts a completion as a use: an old lease completed late is not dropped first', async () => {
      expect(await coordinator.acquire('slow', 'owner', 60_000)).toMatchObject({ kind: 'leader' });
      await cache('b');
      await cache('c');
      expect(await coordinator.complete('slow', 'owner', result('slow'))).toBe(true);

      await cache('d');

      expect(await coordinator.acquire('slow', 'other', 1_000)).toMatchObject({ kind: 'cached' });
      expect(await coordinator.acquire('b', 'owner', 1_000)).toMatchObject({ kind: 'leader' });
    });

    it('never drops a live lease: a new key is refused while every key held is one', async () => {
      for (const key of ['a', 'b', 'c']) {
        expect(await coordinator.acquire(key, 'owner', 5_000)).toMatchObject({ kind: 'leader' });
      }
      clock.advance(1_000);

      const refusal = await coordinator.acquire('d', 'owner', 5_000).catch((error) => error);

      expect(refusal).toBeInstanceOf(InMemoryCapacityError);
      expect(refusal).toMatchObject({
        adapter: 'InMemoryFlightCoordinator',
        option: 'maxEntries',
        limit: 3,
        retryAfterMs: 4_000,
      });
      for (const key of ['a', 'b', 'c']) {
        expect(await coordinator.acquire(key, 'other', 5_000)).toMatchObject({ kind: 'busy' });
      }
      // A lease that ended makes room again, and so does a completion with nothing to keep.
      await coordinator.complete('a', 'owner', { kind: 'result', payload: '', ttlMs: 0 });
      expect(await coordinator.acquire('d', 'owner', 5_000)).toMatchObject({ kind: 'leader' });
      clock.advance(4_000);
      expect(await coordinator.acquire('e', 'owner', 5_000)).toMatchObject({ kind: 'leader' });
    });

    it('passes over live leases to drop an outcome behind them', async () => {
      expect(await coordinator.acquire('lease-1', 'owner', 60_000)).toMatchObject({
        kind: 'leader',
      });
      expect(await coordinator.acquire('lease-2', 'owner', 60_000)).toMatchObject({
        kind: 'leader',
      });
      await cache('cached');

      expect(await coordinator.acquire('new', 'owner', 60_000)).toMatchObject({ kind: 'leader' });
      await coordinator.release('new', 'owner');

      // Dropped: its caller leads again rather than reading the outcome.
      expect(await coordinator.acquire('cached', 'owner', 1_000)).toMatchObject({
        kind: 'leader',
      });
      for (const key of ['lease-1', 'lease-2']) {
        expect(await coordinator.acquire(key, 'other', 1_000)).toMatchObject({ kind: 'busy' });
      }
    });

    it('stays within its bound over many keys, dropping outcomes oldest first', async () => {
      const bounded = new InMemoryFlightCoordinator({ clock, sweepInterval: 0, maxEntries: 100 });
      try {
        for (let index = 0; index < 1_000; index++) {
          await bounded.acquire(`key-${index}`, 'owner', 1_000);
          await bounded.complete(`key-${index}`, 'owner', result('x'));
          expect(bounded.size).toBe(Math.min(index + 1, 100));
        }
        expect(await bounded.acquire('key-899', 'other', 1_000)).toMatchObject({
          kind: 'leader',
        });
        expect(await bounded.acquire('key-999', 'other', 1_000)).toMatchObject({
          kind: 'cached',
        });
      } finally {
        await bounded.close();
      }
    });

    it('rejects a bound that is not a positive integer', () => {
      expect(() => new InMemoryFlightCoordinator({ maxEntries: 0 })).toThrow(/"maxEntries"/);
    });
  });

  describe('maxBytes', () => {
    const MiB = 1024 * 1024;
    /** A 1 MiB payload, counted two bytes per character. */
    const large = (fill: string) => ({
      kind: 'result' as const,
      payload: fill.repeat(MiB),
      ttlMs: 60_000,
    });
    const keyBytes = (key: string, payloadChars: number) => 256 + 2 * key.length + 2 * payloadChars;

    it('holds cached outcomes up to maxBytes, least recently used out first, never a live lease', async () => {
      const clock = new ManualClock();
      const coordinator = new InMemoryFlightCoordinator({
        clock,
        sweepInterval: 0,
        maxBytes: 8 * MiB,
      });
      try {
        const lease = await coordinator.acquire('running', 'holder', 60_000);
        expect(lease).toMatchObject({ kind: 'leader' });
        const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
        for (const key of keys) {
          await coordinator.acquire(key, 'owner', 1_000);
          expect(await coordinator.complete(key, 'owner', large(key.slice(1)))).toBe(true);
        }
        // 2 MiB counted per outcome: three fit beside the lease, the oldest two went.
        expect(coordinator.size).toBe(4);
        expect(coordinator.bytes).toBe(
          keyBytes('running', 'holder'.length) + 3 * keyBytes('k0', MiB),
        );
        expect(coordinator.bytes).toBeLessThanOrEqual(8 * MiB);
        expect(await coordinator.inspectFlight('running')).toMatchObject({ kind: 'leading' });
        expect(await coordinator.acquire('k0', 'other', 1_000)).toMatchObject({ kind: 'leader' });
        await coordinator.release('k0', 'other');
        expect(await coordinator.acquire('k4', 'other', 1_000)).toEqual({
          kind: 'cached',
          payload: '4'.repeat(MiB),
        });

        // Larger than the whole bound: not cached, as with a TTL of 0.
        await coordinator.acquire('huge', 'owner', 1_000);
        expect(
          await coordinator.complete('huge', 'owner', {
            ...large('x'),
            payload: 'x'.repeat(4 * MiB),
          }),
        ).toBe(true);
        expect(await coordinator.inspectFlight('huge')).toEqual({ kind: 'absent' });
        expect(coordinator.size).toBe(4);
      } finally {
        await coordinator.close();
      }
    });

    it('refuses a new key when live leases hold every byte, and gives their bytes back', async () => {
      const clock = new ManualClock();
      const perLease = keyBytes('lease-0', 'owner'.length);
      const coordinator = new InMemoryFlightCoordinator({
        clock,
        sweepInterval: 0,
        maxBytes: 3 * perLease,
      });
      try {
        for (const key of ['lease-0', 'lease-1', 'lease-2']) {
          expect(await coordinator.acquire(key, 'owner', 1_000)).toMatchObject({ kind: 'leader' });
        }
        expect(coordinator.bytes).toBe(3 * perLease);
        clock.advance(400);
        await expect(coordinator.acquire('lease-3', 'owner', 1_000)).rejects.toMatchObject({
          adapter: 'InMemoryFlightCoordinator',
          option: 'maxBytes',
          limit: 3 * perLease,
          unit: 'bytes',
          retryAfterMs: 600,
        });
        await coordinator.release('lease-0', 'owner');
        expect(coordinator.bytes).toBe(2 * perLease);
        expect(await coordinator.acquire('lease-3', 'owner', 1_000)).toMatchObject({
          kind: 'leader',
        });
      } finally {
        await coordinator.close();
      }
    });

    it('holds 256 MiB by default and rejects a bound that is not a positive integer', async () => {
      expect(() => new InMemoryFlightCoordinator({ maxBytes: 0 })).toThrow(/"maxBytes"/);
      expect(() => new InMemoryFlightCoordinator({ maxBytes: 2.5 })).toThrow(
        InvalidFlightOptionError,
      );
      const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
      try {
        for (let index = 0; index < 130; index++) {
          await coordinator.acquire(`k${index}`, 'owner', 1_000);
          await coordinator.complete(`k${index}`, 'owner', large('y'));
        }
        // 128 outcomes of 2 MiB and a little over 256 MiB: 127 are kept.
        expect(coordinator.size).toBe(127);
        expect(coordinator.bytes).toBeLessThanOrEqual(256 * MiB);
      } finally {
        await coordinator.close();
      }
    });
  });
});
