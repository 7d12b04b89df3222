import { ProblemType } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import { DeployCluster, type DeployNode } from '../support/deploy-cluster.js';

interface ForeignOwnerEvent {
  readonly event?: { outcome: string; owner: string; foreignOwner: string; key: string };
}

const payment = (i: number) => ({ orderId: `order-${i}`, amount: `${i + 1}0.00` });

/**
 * Two services deployed with one namespace and one operation on the same Redis and the same
 * PostgreSQL schema, each in its own process: the second meets the first's records and refuses
 * them, while the replicas of one service share their records as usual. The business rows
 * written by the handler (one per execution) are the truth every assertion counts.
 */
describe.each(['redis', 'postgres'] as const)(
  'services sharing a key space, records on %s',
  (store) => {
    const cluster = new DeployCluster(store, 'owner');

    beforeAll(() => cluster.setUp(), 60_000);
    afterAll(() => cluster.tearDown());

    const startNode = (
      service: string,
      name: string,
      onForeignClaim?: 'warn',
    ): Promise<DeployNode> =>
      cluster.start(
        {
          version: 'v1',
          leaseTtl: 10_000,
          service,
          name,
          ...(onForeignClaim && { onForeignClaim }),
        },
        name,
      );

    async function foreignOwnerMetric(node: DeployNode): Promise<string[]> {
      const text = await (await fetch(`http://127.0.0.1:${node.port}/metrics`)).text();
      return text.split('\n').filter((line) => line.startsWith('oncely_foreign_owner_total{'));
    }

    function foreignOwnerEvents(
      node: DeployNode,
      outcome = 'foreign_owner',
    ): ForeignOwnerEvent['event'][] {
      return (node.worker.messages as ForeignOwnerEvent[])
        .map((message) => message.event)
        .filter((event) => event?.outcome === outcome);
    }

    async function executions(keys: readonly string[]): Promise<Record<string, number>> {
      const rows = await cluster.executions(keys);
      return Object.fromEntries(keys.map((key) => [key, rows[key]!.length]));
    }

    it('a second service booted with onForeignClaim: warn meets the first one’s records: foreign-owner problem, event and metric, nothing replayed or overwritten', async () => {
      const orders = await startNode('orders-api', 'orders');
      // With the default (fail) it would not boot: see shared-claims.e2e.spec.ts.
      const billing = await startNode('billing-api', 'billing', 'warn');
      expect(foreignOwnerEvents(billing, 'foreign_claim')).toEqual([
        {
          mechanism: 'idempotency',
          outcome: 'foreign_claim',
          operation: `${cluster.namespace}:payment-capture:v1`,
          key: `${cluster.namespace}:payment-capture:v1`,
          owner: 'billing-api',
          foreignOwner: 'orders-api',
        },
      ]);
      const keys = Array.from({ length: 3 }, () => randomUUID());
      const firsts = await Promise.all(keys.map((key, i) => cluster.pay(orders, key, payment(i))));
      expect(firsts.map(({ status }) => status)).toEqual([201, 201, 201]);
      const held = randomUUID();
      const inFlight = cluster.pay(orders, held, payment(9), { 'x-hold': held });
      await orders.worker.message<{ entered?: string }>((message) => message.entered === held);

      // The same requests, another payload, and a request held in flight by the first service.
      const refused = await Promise.all([
        ...keys.flatMap((key, i) =>
          Array.from({ length: 5 }, () => cluster.pay(billing, key, payment(i))),
        ),
        ...keys.map((key) => cluster.pay(billing, key, { ...payment(0), amount: '999.00' })),
        ...Array.from({ length: 3 }, () => cluster.pay(billing, held, payment(9))),
      ]);

      expect(refused).toHaveLength(21);
      for (const answer of refused) {
        expect(answer.status).toBe(409);
        expect(answer.replayed).toBe(false);
        // The services are the operators' business: events and metrics name them, clients not.
        expect(answer.body).toEqual({
          type: ProblemType.foreignOwner,
          title: 'Key owned by another service',
          status: 409,
          detail:
            'This key is already used by another part of the system; nothing was replayed, overwritten or run. A retry gets the same answer until the server is reconfigured.',
        });
      }
      const events = foreignOwnerEvents(billing);
      expect(events).toHaveLength(21);
      for (const event of events) {
        expect(event).toMatchObject({
          outcome: 'foreign_owner',
          owner: 'billing-api',
          foreignOwner: 'orders-api',
        });
      }
      expect(await foreignOwnerMetric(billing)).toEqual([
        `oncely_foreign_owner_total{mechanism="idempotency",operation="${cluster.namespace}:payment-capture:v1",owner="billing-api",foreign_owner="orders-api"} 21`,
      ]);
      expect(await foreignOwnerMetric(orders)).toEqual([]);

      orders.worker.send({ release: held });
      const heldAnswer = await inFlight;
      expect(heldAnswer.status).toBe(201);
      // The first service's records are untouched: they replay exactly what it answered.
      const replays = await Promise.all(keys.map((key, i) => cluster.pay(orders, key, payment(i))));
      expect(replays.map(({ status, replayed }) => [status, replayed])).toEqual(
        keys.map(() => [201, true]),
      );
      expect(replays.map(({ body }) => body)).toEqual(firsts.map(({ body }) => body));
      expect(await cluster.pay(orders, held, payment(9))).toMatchObject({
        replayed: true,
        body: heldAnswer.body,
      });
      expect(await executions([...keys, held])).toEqual(
        Object.fromEntries([...keys, held].map((key) => [key, 1])),
      );
      await Promise.all([cluster.stop(orders), cluster.stop(billing)]);
    }, 180_000);

    it('three replicas of one service share their records: no foreign owner', async () => {
      const replicas = await Promise.all(
        ['a', 'b', 'c'].map((name) => startNode('ledger-api', `ledger-${name}`)),
      );
      const keys = Array.from({ length: 3 }, () => randomUUID());
      const answers = await Promise.all(
        keys.flatMap((key, i) =>
          replicas.flatMap((replica) => [1, 2, 3].map(() => cluster.pay(replica, key, payment(i)))),
        ),
      );

      expect(answers.filter(({ body }) => body.type === ProblemType.foreignOwner)).toEqual([]);
      const settled = await Promise.all(
        keys.flatMap((key, i) => replicas.map((replica) => cluster.pay(replica, key, payment(i)))),
      );
      expect(settled.map(({ status, replayed }) => [status, replayed])).toEqual(
        settled.map(() => [201, true]),
      );
      expect(await executions(keys)).toEqual(Object.fromEntries(keys.map((key) => [key, 1])));
      for (const replica of replicas) {
        expect(foreignOwnerEvents(replica)).toEqual([]);
        expect(await foreignOwnerMetric(replica)).toEqual([]);
      }
      await Promise.all(replicas.map((replica) => cluster.stop(replica)));
    }, 180_000);
  },
);
