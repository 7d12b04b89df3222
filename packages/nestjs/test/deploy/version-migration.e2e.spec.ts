import { ProblemType } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeployCluster, type DeployNode, type PaymentAnswer } from '../support/deploy-cluster.js';

/** The records' lease: how long a request killed in flight keeps its key. */
const LEASE_MS = 4_000;

const payment = (i: number) => ({ orderId: `order-${i}`, amount: `${i + 1}0.00` });

/**
 * The deploy of a payments service whose `payment-capture` operation goes from `v1` to `v2`, each
 * release in its own process on one Redis and one PostgreSQL schema: the business rows written
 * by the handler (one per execution) are the truth every assertion counts.
 */
describe.each(['redis', 'postgres'] as const)('a version bump deployed, records on %s', (store) => {
  const cluster = new DeployCluster(store, 'deploy');

  beforeAll(() => cluster.setUp(), 60_000);
  afterAll(() => cluster.tearDown());

  const startNode = (version: string, previousVersions?: string[]): Promise<DeployNode> =>
    cluster.start(
      { version, leaseTtl: LEASE_MS, ...(previousVersions && { previousVersions }) },
      version,
    );

  it('v1 killed with a request in flight, v2 with previousVersions: retries replay, the killed request answers 409 until its lease ends, each payment runs once', async () => {
    // A rolling deploy: the v2 release boots while v1 serves, then the v1 process dies.
    const [v1, v2] = await Promise.all([startNode('v1'), startNode('v2', ['v1'])]);
    const completed = Array.from({ length: 5 }, () => randomUUID());
    const firsts = await Promise.all(completed.map((key, i) => cluster.pay(v1, key, payment(i))));
    expect(firsts.map(({ status, body }) => [status, body.version])).toEqual(
      completed.map(() => [201, 'v1']),
    );
    const cutOff = randomUUID();
    const inFlight = cluster.pay(v1, cutOff, payment(9), { 'x-hold': cutOff }).then(
      () => 'answered',
      () => 'cut off',
    );
    await v1.worker.message<{ entered?: string }>((message) => message.entered === cutOff);

    v1.worker.kill('SIGKILL');
    await v1.worker.exited;
    const killedAt = Date.now();
    expect(await inFlight).toBe('cut off');

    const retries = await Promise.all(
      completed.flatMap((key, i) =>
        Array.from({ length: 10 }, () => cluster.pay(v2, key, payment(i))),
      ),
    );
    expect(retries.map(({ status, replayed }) => [status, replayed])).toEqual(
      retries.map(() => [201, true]),
    );
    expect(retries.map(({ body }) => body)).toEqual(
      firsts.flatMap(({ body }) => Array.from({ length: 10 }, () => body)),
    );
    const otherAmount = await cluster.pay(v2, completed[0]!, { ...payment(0), amount: '999.00' });
    expect(otherAmount.status).toBe(422);
    expect(otherAmount.body.type).toBe(ProblemType.payloadMismatch);

    const answers: PaymentAnswer[] = [];
    const deadline = killedAt + LEASE_MS + 20_000;
    for (;;) {
      const answer = await cluster.pay(v2, cutOff, payment(9));
      answers.push(answer);
      if (answer.status !== 409 || Date.now() > deadline) break;
      await sleep(100);
    }
    const ranAt = Date.now();
    const refused = answers.slice(0, -1);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.body.type).toBe(ProblemType.requestInFlight);
      expect(answer.retryAfter).toBeGreaterThanOrEqual(1);
      expect(answer.retryAfter).toBeLessThanOrEqual(LEASE_MS / 1000);
    }
    // Taken (or last renewed) at most a third of a lease before the kill, it outlived the kill.
    expect(ranAt - killedAt).toBeGreaterThanOrEqual(LEASE_MS / 3);
    const ran = answers.at(-1)!;
    expect([ran.status, ran.replayed, ran.body.version]).toEqual([201, false, 'v2']);
    expect(await cluster.pay(v2, cutOff, payment(9))).toMatchObject({
      replayed: true,
      body: ran.body,
    });

    const fresh = randomUUID();
    expect((await cluster.pay(v2, fresh, payment(7))).body.version).toBe('v2');
    expect(await cluster.executions([...completed, cutOff, fresh])).toEqual({
      ...Object.fromEntries(completed.map((key) => [key, ['v1']])),
      [cutOff]: ['v2'],
      [fresh]: ['v2'],
    });
    await cluster.stop(v2);
  }, 180_000);

  it('v1 and v2 serving together: a request in flight on v1 is a 409 on v2, then replays there; only the two-step rollout covers retries moving back to v1', async () => {
    const [v1, v2] = await Promise.all([startNode('v1'), startNode('v2', ['v1'])]);
    const held = randomUUID();
    const onV1 = cluster.pay(v1, held, payment(1), { 'x-hold': held });
    await v1.worker.message<{ entered?: string }>((message) => message.entered === held);

    const duplicates = await Promise.all(
      Array.from({ length: 10 }, () => cluster.pay(v2, held, payment(1))),
    );
    expect(duplicates.map(({ status, body }) => [status, body.type])).toEqual(
      duplicates.map(() => [409, ProblemType.requestInFlight]),
    );
    v1.worker.send({ release: held });
    const first = await onV1;
    expect([first.status, first.body.version]).toEqual([201, 'v1']);
    expect(await cluster.pay(v2, held, payment(1))).toMatchObject({
      replayed: true,
      body: first.body,
    });

    // A v1 release never reads v2's records: a retry moving back to it runs again.
    const movedBack = randomUUID();
    await cluster.pay(v2, movedBack, payment(2));
    expect(await cluster.pay(v1, movedBack, payment(2))).toMatchObject({
      status: 201,
      replayed: false,
    });
    // Step one of the two-step rollout: v1 reading v2's records, deployed before v2 serves.
    const v1ReadingV2 = await startNode('v1', ['v2']);
    const covered = randomUUID();
    const onV2 = await cluster.pay(v2, covered, payment(3));
    expect(await cluster.pay(v1ReadingV2, covered, payment(3))).toMatchObject({
      status: 201,
      replayed: true,
      body: onV2.body,
    });

    expect(await cluster.executions([held, movedBack, covered])).toEqual({
      [held]: ['v1'],
      [movedBack]: ['v2', 'v1'],
      [covered]: ['v2'],
    });
    await Promise.all([cluster.stop(v1), cluster.stop(v2), cluster.stop(v1ReadingV2)]);
  }, 180_000);
});
