import { LeaseLostError } from '@oncely/core';
import { LeaseWatchdog, type WatchedLease } from '../../src/lease/lease-watchdog.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A lease whose renewals answer as `answer` says, counting them. */
function leaseOf(answer: () => Promise<boolean>, ttl = 90) {
  const seen = { renewals: 0, renewErrors: [] as unknown[], lost: [] as LeaseLostError[] };
  const lease: WatchedLease = {
    key: 'k',
    fence: 7,
    ttl,
    since: performance.now(),
    renew: () => {
      seen.renewals += 1;
      return answer();
    },
    onRenewError: (error) => seen.renewErrors.push(error),
    onLost: (error) => seen.lost.push(error),
  };
  return { lease, seen };
}

describe('LeaseWatchdog', () => {
  it('renews at a third of the TTL while the work runs, and never once stopped', async () => {
    const { lease, seen } = leaseOf(async () => true, 600);
    const watchdog = new LeaseWatchdog(lease);
    await sleep(500);
    watchdog.stop();
    const renewals = seen.renewals;
    await sleep(400);
    expect(renewals).toBe(2);
    expect(seen.renewals).toBe(2);
    expect(watchdog.lostWith).toBeUndefined();
    expect(watchdog.signal.aborted).toBe(false);
  });

  it('makes no renewal at all when the work ends before the first tick', async () => {
    const { lease, seen } = leaseOf(async () => true, 300);
    new LeaseWatchdog(lease).stop();
    await sleep(150);
    expect(seen.renewals).toBe(0);
  });

  it('loses the lease when a renewal is refused: the signal aborts with LeaseLostError', async () => {
    const { lease, seen } = leaseOf(async () => false);
    const watchdog = new LeaseWatchdog(lease);
    const signal = watchdog.signal;
    await sleep(60);
    expect(seen.renewals).toBe(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LeaseLostError);
    expect(signal.reason).toBe(watchdog.lostWith);
    expect(seen.lost).toEqual([watchdog.lostWith]);
    expect((signal.reason as LeaseLostError).identity).toBe('k');
    expect((signal.reason as LeaseLostError).fence).toBe(7);
  });

  it('tells a lease taken away before it ran out (an operator released it) from one that expired', async () => {
    // Refused at the first renewal, a third into a lease with plenty of time left.
    const released = new LeaseWatchdog(leaseOf(async () => false, 900).lease);
    await sleep(400);
    expect(released.lostWith?.reason).toBe('released');
    expect(released.lostWith?.message).toBe(
      'The lease on "k" (fence 7) was released before it expired, by an operator (oncely release, OncelyAdmin.forceRelease) or by the store losing it: nothing of this run was kept, and the next request with this key runs again.',
    );

    const expired = new LeaseWatchdog(
      leaseOf(() => Promise.reject(new Error('store unreachable'))).lease,
    );
    await sleep(150);
    expect(expired.lostWith?.reason).toBe('expired');
    expect(expired.lostWith?.message).toMatch(/another execution now owns it\. Raise leaseTtl/);
  });

  it('loses the lease once failing renewals let the confirmed time run out', async () => {
    const down = new Error('store unreachable');
    const { lease, seen } = leaseOf(() => Promise.reject(down), 300);
    const watchdog = new LeaseWatchdog(lease);
    await sleep(150);
    expect(watchdog.lostWith).toBeUndefined();
    expect(seen.renewErrors).toEqual([down]);
    await sleep(250);
    expect(watchdog.lostWith).toBeInstanceOf(LeaseLostError);
    expect(seen.lost).toHaveLength(1);
    expect(seen.renewErrors.length).toBeGreaterThanOrEqual(2);
    // A signal made after the loss is born aborted.
    expect(watchdog.signal.reason).toBe(watchdog.lostWith);
  });

  it('loses the lease when a renewal hangs past the confirmed time', async () => {
    const { lease, seen } = leaseOf(() => new Promise<boolean>(() => undefined));
    const watchdog = new LeaseWatchdog(lease);
    await sleep(150);
    expect(seen.renewals).toBe(1);
    expect(watchdog.lostWith).toBeInstanceOf(LeaseLostError);
    expect(seen.renewErrors).toEqual([]);
  });
});
