import { ProblemType } from '@oncely/core';
import {
  killAllWorkers,
  requireService,
  services,
  spawnWorker,
  type Worker,
} from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { PostgresSchema } from '../fixtures/postgres-schema.js';
import { uniqueNamespace } from '../fixtures/test-app.js';
import type { DeployNodeConfig } from '../support/deploy-node.js';

const WORKER = 'packages/nestjs/test/support/deploy.worker.ts';

interface Answer {
  readonly status: number;
  readonly replayed: boolean;
  readonly body: {
    paymentId?: number;
    type?: string;
    owner?: string;
    foreignOwner?: string;
    detail?: string;
  };
}

interface Node {
  readonly worker: Worker;
  readonly port: number;
}

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
    const schema = new PostgresSchema();
    const namespace = uniqueNamespace('owner');
    const keyPrefix = `oncely-owner-${randomUUID().slice(0, 8)}:`;
    let admin: DataSource;

    beforeAll(async () => {
      await requireService('redis');
      await requireService('postgres');
      admin = await schema.create();
      await admin.query(
        `CREATE TABLE "${schema.name}"."payments" (id serial PRIMARY KEY, idempotency_key varchar(64) NOT NULL, order_id varchar(64) NOT NULL, amount varchar(16) NOT NULL, version varchar(8) NOT NULL)`,
      );
    }, 60_000);

    afterAll(async () => {
      await killAllWorkers();
      await schema.drop();
      const redis = new Redis({ ...services.redis });
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await redis.quit();
    });

    async function startNode(service: string, name: string): Promise<Node> {
      const config: DeployNodeConfig = {
        namespace,
        keyPrefix,
        schema: schema.name,
        store,
        version: 'v1',
        leaseTtl: 10_000,
        service,
        name,
      };
      const worker = spawnWorker(WORKER, { args: [JSON.stringify(config)] });
      const { port } = await worker.message<{ ready?: string; port: number }>(
        (message) => message.ready === name,
        120_000,
      );
      return { worker, port };
    }

    async function pay(
      node: Node,
      key: string,
      body: object,
      headers: Record<string, string> = {},
    ): Promise<Answer> {
      const response = await fetch(`http://127.0.0.1:${node.port}/payments`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-tenant': 't-1',
          'idempotency-key': key,
          ...headers,
        },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        body: (await response.json()) as Answer['body'],
      };
    }

    async function foreignOwnerMetric(node: Node): Promise<string[]> {
      const text = await (await fetch(`http://127.0.0.1:${node.port}/metrics`)).text();
      return text.split('\n').filter((line) => line.startsWith('oncely_foreign_owner_total{'));
    }

    function foreignOwnerEvents(node: Node): ForeignOwnerEvent['event'][] {
      return (node.worker.messages as ForeignOwnerEvent[])
        .map((message) => message.event)
        .filter((event) => event !== undefined);
    }

    async function executions(keys: readonly string[]): Promise<Record<string, number>> {
      const rows = await admin.query<{ idempotency_key: string; count: string }[]>(
        `SELECT idempotency_key, count(*) FROM "${schema.name}"."payments" WHERE idempotency_key = ANY($1) GROUP BY idempotency_key`,
        [keys],
      );
      const byKey: Record<string, number> = Object.fromEntries(keys.map((key) => [key, 0]));
      for (const row of rows) byKey[row.idempotency_key] = Number(row.count);
      return byKey;
    }

    async function stop(node: Node): Promise<void> {
      node.worker.send({ stop: true });
      await node.worker.exited;
    }

    it('a second service meets the first one’s records: foreign-owner problem, event and metric, nothing replayed or overwritten', async () => {
      const [orders, billing] = await Promise.all([
        startNode('orders-api', 'orders'),
        startNode('billing-api', 'billing'),
      ]);
      const keys = Array.from({ length: 3 }, () => randomUUID());
      const firsts = await Promise.all(keys.map((key, i) => pay(orders, key, payment(i))));
      expect(firsts.map(({ status }) => status)).toEqual([201, 201, 201]);
      const held = randomUUID();
      const inFlight = pay(orders, held, payment(9), { 'x-hold': held });
      await orders.worker.message<{ entered?: string }>((message) => message.entered === held);

      // The same requests, another payload, and a request held in flight by the first service.
      const refused = await Promise.all([
        ...keys.flatMap((key, i) => Array.from({ length: 5 }, () => pay(billing, key, payment(i)))),
        ...keys.map((key) => pay(billing, key, { ...payment(0), amount: '999.00' })),
        ...Array.from({ length: 3 }, () => pay(billing, held, payment(9))),
      ]);

      expect(refused).toHaveLength(21);
      for (const answer of refused) {
        expect(answer.status).toBe(409);
        expect(answer.replayed).toBe(false);
        expect(answer.body).toMatchObject({
          type: ProblemType.foreignOwner,
          owner: 'billing-api',
          foreignOwner: 'orders-api',
        });
        expect(answer.body.detail).toMatch(/shared: true/);
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
        `oncely_foreign_owner_total{mechanism="idempotency",operation="${namespace}:payment-capture:v1",owner="billing-api",foreign_owner="orders-api"} 21`,
      ]);
      expect(await foreignOwnerMetric(orders)).toEqual([]);

      orders.worker.send({ release: held });
      const heldAnswer = await inFlight;
      expect(heldAnswer.status).toBe(201);
      // The first service's records are untouched: they replay exactly what it answered.
      const replays = await Promise.all(keys.map((key, i) => pay(orders, key, payment(i))));
      expect(replays.map(({ status, replayed }) => [status, replayed])).toEqual(
        keys.map(() => [201, true]),
      );
      expect(replays.map(({ body }) => body)).toEqual(firsts.map(({ body }) => body));
      expect(await pay(orders, held, payment(9))).toMatchObject({
        replayed: true,
        body: heldAnswer.body,
      });
      expect(await executions([...keys, held])).toEqual(
        Object.fromEntries([...keys, held].map((key) => [key, 1])),
      );
      await Promise.all([stop(orders), stop(billing)]);
    }, 180_000);

    it('three replicas of one service share their records: no foreign owner', async () => {
      const replicas = await Promise.all(
        ['a', 'b', 'c'].map((name) => startNode('ledger-api', `ledger-${name}`)),
      );
      const keys = Array.from({ length: 3 }, () => randomUUID());
      const answers = await Promise.all(
        keys.flatMap((key, i) =>
          replicas.flatMap((replica) => [1, 2, 3].map(() => pay(replica, key, payment(i)))),
        ),
      );

      expect(answers.filter(({ body }) => body.type === ProblemType.foreignOwner)).toEqual([]);
      const settled = await Promise.all(
        keys.flatMap((key, i) => replicas.map((replica) => pay(replica, key, payment(i)))),
      );
      expect(settled.map(({ status, replayed }) => [status, replayed])).toEqual(
        settled.map(() => [201, true]),
      );
      expect(await executions(keys)).toEqual(Object.fromEntries(keys.map((key) => [key, 1])));
      for (const replica of replicas) {
        expect(foreignOwnerEvents(replica)).toEqual([]);
        expect(await foreignOwnerMetric(replica)).toEqual([]);
      }
      await Promise.all(replicas.map(stop));
    }, 180_000);
  },
);
