import { ProblemType } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeployCluster,
  bootedNode,
  refusedBoot,
  type DeployNode,
  type NodeConfig,
} from '../support/deploy-cluster.js';

interface EventMessage {
  readonly event?: {
    mechanism: string;
    outcome: string;
    owner: string;
    foreignOwner: string;
  };
}

/** The foreign_claim and foreign_owner events a node reported. */
const alarms = (running: DeployNode) =>
  (running.worker.messages as EventMessage[])
    .map(({ event }) => event)
    .filter((event) => event !== undefined);

const payment = (i: number) => ({ orderId: `order-${i}`, amount: `${i + 1}0.00` });

/**
 * Renaming a service from `shop` to `shop-api` on one Redis and one PostgreSQL, each node a real
 * process, through the steps docs/shared-claims.md describes: (1) the old name accepting the new
 * one rolls out beside the running fleet, (2) the new name accepting the old one beside step 1,
 * (3) the new name alone. Every step boots, no node raises an alarm, and what either name wrote
 * (records, cached SingleFlight results) answers the other as its own: executed once, counted in
 * the business rows. An unrelated service is still refused, at boot and per call.
 */
describe.each(['redis', 'postgres'] as const)('renaming a service, records on %s', (store) => {
  const cluster = new DeployCluster(store, 'rename');

  beforeAll(() => cluster.setUp(), 60_000);
  afterAll(() => cluster.tearDown());

  // A short heartbeat: several renewals see the other name's claims during each overlap.
  const boot = (service: string, name: string, more: Partial<NodeConfig> = {}) =>
    cluster.boot({
      version: 'v1',
      leaseTtl: 10_000,
      service,
      name,
      quotes: true,
      claims: { ttl: 2_000, renewEvery: 300 },
      ...more,
    });

  async function executions(keys: readonly string[]): Promise<Record<string, number>> {
    const rows = await cluster.executions(keys);
    return Object.fromEntries(keys.map((key) => [key, rows[key]!.length]));
  }

  it('every step boots beside the previous one, and records and cached results of either name replay to the other, executed once', async () => {
    const old = bootedNode(await boot('shop', 'step-0'));
    const [byOld, quotedByOld] = [randomUUID(), randomUUID()];
    const first = await cluster.pay(old, byOld, payment(0));
    const firstQuote = await cluster.quote(old, quotedByOld);
    expect([first.status, firstQuote.status]).toEqual([201, 200]);

    // Step 1: the old name, accepting the new one, rolls out beside the running fleet.
    const step1 = bootedNode(await boot('shop', 'step-1', { serviceAliases: ['shop-api'] }));
    await cluster.stop(old);

    // Step 2: the new name, accepting the old one, beside step 1.
    const step2 = bootedNode(await boot('shop-api', 'step-2', { serviceAliases: ['shop'] }));
    expect(await cluster.claimants()).toEqual(['shop', 'shop-api']);
    const [byNew, quotedByNew, raced] = [randomUUID(), randomUUID(), randomUUID()];
    const second = await cluster.pay(step2, byNew, payment(1));
    const secondQuote = await cluster.quote(step2, quotedByNew);
    const overlap = await Promise.all([
      cluster.pay(step2, byOld, payment(0)),
      cluster.pay(step1, byNew, payment(1)),
      cluster.quote(step2, quotedByOld),
      cluster.quote(step1, quotedByNew),
    ]);
    expect(overlap.map(({ status, body }) => [status, body])).toEqual([
      [201, first.body],
      [201, second.body],
      [200, firstQuote.body],
      [200, secondQuote.body],
    ]);
    expect(overlap.slice(0, 2).map(({ replayed }) => replayed)).toEqual([true, true]);
    // One request racing on both names: one execution; the others are told it is in flight (as
    // between replicas of one name) or replay it, none meets a foreign owner.
    const racing = await Promise.all(
      [step1, step2, step1, step2].map((replica) => cluster.pay(replica, raced, payment(2))),
    );
    const paidIds = racing.filter(({ status }) => status === 201).map(({ body }) => body.paymentId);
    expect(new Set(paidIds).size).toBe(1);
    expect(
      racing.filter(({ status }) => status !== 201).map(({ status, body }) => [status, body.type]),
    ).toEqual(racing.slice(paidIds.length).map(() => [409, ProblemType.requestInFlight]));
    const settled = await Promise.all(
      [step1, step2].map((replica) => cluster.pay(replica, raced, payment(2))),
    );
    expect(settled.map(({ status, replayed }) => [status, replayed])).toEqual([
      [201, true],
      [201, true],
    ]);
    expect(settled[1]!.body).toEqual(settled[0]!.body);
    await sleep(1_000); // renewals of both names, each seeing the other's claims
    await cluster.stop(step1);

    // Step 3: the new name alone, beside step 2.
    const step3 = bootedNode(await boot('shop-api', 'step-3'));
    expect(await cluster.claimants()).toEqual(['shop-api', 'shop-api']);
    const third = await cluster.pay(step3, byNew, payment(1));
    expect([third.status, third.replayed, third.body]).toEqual([201, true, second.body]);
    expect(await cluster.quote(step3, quotedByNew)).toMatchObject({ body: secondQuote.body });
    // Why step 3 waits a retention: a record of the old name, still kept, is another service's.
    const early = await cluster.pay(step3, byOld, payment(0));
    expect([early.status, early.body.type]).toEqual([409, ProblemType.foreignOwner]);

    expect(
      await executions([byOld, byNew, raced, `quote:${quotedByOld}`, `quote:${quotedByNew}`]),
    ).toEqual({
      [byOld]: 1,
      [byNew]: 1,
      [raced]: 1,
      [`quote:${quotedByOld}`]: 1,
      [`quote:${quotedByNew}`]: 1,
    });
    for (const replica of [old, step1, step2]) expect(alarms(replica)).toEqual([]);
    expect(alarms(step3)).toMatchObject([
      {
        mechanism: 'idempotency',
        outcome: 'foreign_owner',
        owner: 'shop-api',
        foreignOwner: 'shop',
      },
    ]);
    await Promise.all([cluster.stop(step2), cluster.stop(step3)]);
  }, 300_000);

  it('an unrelated service beside both names still fails its boot, and with warn is refused their records and cached results', async () => {
    const step1 = bootedNode(await boot('shop', 'step-1', { serviceAliases: ['shop-api'] }));
    const step2 = bootedNode(await boot('shop-api', 'step-2', { serviceAliases: ['shop'] }));
    const [byOld, quotedByNew] = [randomUUID(), randomUUID()];
    const paid = await cluster.pay(step1, byOld, payment(0));
    const quoted = await cluster.quote(step2, quotedByNew);

    const refused = refusedBoot(await boot('billing-api', 'billing'));
    expect(refused.name).toBe('ForeignClaimError');
    expect(refused.message).toMatch(/^Service "billing-api" .* which service "shop(-api)?" /);

    const billing = bootedNode(await boot('billing-api', 'billing', { onForeignClaim: 'warn' }));
    const answers = [
      await cluster.pay(billing, byOld, payment(0)),
      await cluster.quote(billing, quotedByNew),
    ];
    expect(answers.map(({ status, body }) => [status, body.type])).toEqual([
      [409, ProblemType.foreignOwner],
      [409, ProblemType.foreignOwner],
    ]);
    expect(
      alarms(billing)
        .filter(({ outcome }) => outcome === 'foreign_owner')
        .map(({ mechanism, owner, foreignOwner }) => [mechanism, owner, foreignOwner]),
    ).toEqual([
      ['idempotency', 'billing-api', 'shop'],
      ['single-flight', 'billing-api', 'shop-api'],
    ]);
    // The renamed service's own answers are untouched.
    expect(await cluster.pay(step2, byOld, payment(0))).toMatchObject({
      replayed: true,
      body: paid.body,
    });
    expect(await cluster.quote(step1, quotedByNew)).toMatchObject({ body: quoted.body });
    expect(await executions([byOld, `quote:${quotedByNew}`])).toEqual({
      [byOld]: 1,
      [`quote:${quotedByNew}`]: 1,
    });
    for (const replica of [step1, step2]) {
      expect(alarms(replica).filter(({ outcome }) => outcome === 'foreign_owner')).toEqual([]);
    }
    await Promise.all([cluster.stop(step1), cluster.stop(step2), cluster.stop(billing)]);
  }, 300_000);
});
