import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { randomUUID } from 'node:crypto';
import { startCookbookApp, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import { InvoiceLedger, InvoicingScheduler, MonthlyInvoicingJob } from './invoicing.job.js';

describe('cookbook: scheduled job (the billing month, two nodes on Redis)', () => {
  /** The invoices table both nodes write to. */
  const ledger = new InvoiceLedger();
  const nodes: CookbookApp[] = [];

  beforeAll(async () => {
    await requireService('redis');
    const keyPrefix = `oncely-cookbook-${randomUUID().slice(0, 8)}:`;
    for (let node = 0; node < 2; node++) {
      nodes.push(
        await startCookbookApp({
          providers: [
            MonthlyInvoicingJob,
            InvoicingScheduler,
            { provide: InvoiceLedger, useValue: ledger },
          ],
          oncely: {
            coordinator: new RedisFlightCoordinator({ ...services.redis }, { keyPrefix }),
            store: new RedisIdempotencyRecordStore({ ...services.redis }, { keyPrefix }),
          },
        }),
      );
    }
  });

  afterAll(() => Promise.all(nodes.map((node) => node.close())));

  const fire = (node: number, billingMonth: string) =>
    nodes[node]!.get(InvoicingScheduler).fire(billingMonth);
  const runs = (billingMonth: string) =>
    ledger.runs.filter((run) => run.billingMonth === billingMonth);

  it('runs a month fired on both nodes at once exactly once', async () => {
    ledger.gate = new Gate();
    const leader = fire(0, '2026-01');
    await ledger.gate.entered;
    const others = await Promise.all([fire(0, '2026-01'), fire(1, '2026-01'), fire(1, '2026-01')]);
    ledger.gate.open();
    ledger.gate = undefined;
    expect(others).toEqual([1, 2, 3].map(() => ({ kind: 'running_elsewhere' })));
    expect(await leader).toEqual({ kind: 'invoiced', run: runs('2026-01')[0] });
    expect(runs('2026-01')).toHaveLength(1);
  });

  it('hands a late firing the run, on either node, without running it again', async () => {
    const first = await fire(0, '2026-02');
    const late = await fire(1, '2026-02');
    expect(late).toEqual(first);
    expect(runs('2026-02')).toHaveLength(1);
    expect(nodes[1]!.keys('shop:monthly-invoicing:v1', 'replayed')).toContain(
      'shop:monthly-invoicing:v1::2026-02',
    );
  });

  it('keeps nothing of a failed run: the next firing runs the month', async () => {
    ledger.down = true;
    await expect(fire(0, '2026-03')).rejects.toThrow('The invoices database is unavailable.');
    ledger.down = false;
    const next = await fire(1, '2026-03');
    expect(next.kind).toBe('invoiced');
    expect(runs('2026-03')).toHaveLength(1);
  });

  describe('reverse tests: alike, yet different runs', () => {
    it('runs each month once: another month is another run', async () => {
      await fire(0, '2026-04');
      await fire(1, '2026-05');
      await fire(0, '2026-05');
      expect(runs('2026-04')).toHaveLength(1);
      expect(runs('2026-05')).toHaveLength(1);
    });
  });
});
