import { InMemoryFlightCoordinator, InvalidFlightOptionError } from '@oncely/core';
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
});
