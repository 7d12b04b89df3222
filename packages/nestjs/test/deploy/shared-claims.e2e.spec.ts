import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeployCluster,
  bootedNode,
  refusedBoot,
  type DeployNode,
} from '../support/deploy-cluster.js';

interface EventMessage {
  readonly event?: { outcome: string; owner: string; foreignOwner: string; operation: string };
}

const claimEvents = (running: DeployNode) =>
  (running.worker.messages as EventMessage[])
    .map(({ event }) => event)
    .filter((event) => event?.outcome === 'foreign_claim');

/**
 * Services registering their claims at boot where their records go (Redis, or the PostgreSQL
 * database), each node a real process: a second service claiming the same operation does not
 * boot; replicas of one service do; a replica that stops withdraws its own claim only, and a
 * killed one's claim lapses after the heartbeat TTL.
 */
describe.each(['redis', 'postgres'] as const)('shared claims, records on %s', (store) => {
  const cluster = new DeployCluster(store, 'claims');

  beforeAll(() => cluster.setUp(), 60_000);
  afterAll(() => cluster.tearDown());

  const boot = (service: string, name: string, more: object = {}) =>
    cluster.boot({ version: 'v1', leaseTtl: 10_000, service, name, ...more });

  it('the second service’s boot fails naming both services and routes; with warn it boots and reports the claim', async () => {
    const orders = bootedNode(await boot('orders-api', 'orders'));

    const refused = refusedBoot(await boot('billing-api', 'billing'));

    expect(refused.name).toBe('ForeignClaimError');
    const route = String.raw`\w*PaymentsController\.capture \(POST /payments\)`;
    const operation = `${cluster.namespace}:payment-capture:v1`.replace(/[.-]/g, '\\$&');
    expect(refused.message).toMatch(
      new RegExp(
        `^Service "billing-api" \\(${route}\\) claims idempotency operation "${operation}", which service "orders-api" \\(${route}\\) already claims:`,
      ),
    );
    expect(refused.message).toMatch(/Rename the namespace or the operation.*shared: true/);
    // The refused service registered nothing, and the first one's claim is untouched.
    expect(await cluster.claimants()).toEqual(['orders-api']);

    const billing = bootedNode(await boot('billing-api', 'billing', { onForeignClaim: 'warn' }));
    expect(claimEvents(billing)).toEqual([
      {
        mechanism: 'idempotency',
        outcome: 'foreign_claim',
        operation: `${cluster.namespace}:payment-capture:v1`,
        key: `${cluster.namespace}:payment-capture:v1`,
        owner: 'billing-api',
        foreignOwner: 'orders-api',
      },
    ]);
    const metrics = await (await fetch(`http://127.0.0.1:${billing.port}/metrics`)).text();
    expect(metrics).toContain(
      `oncely_decisions_total{mechanism="idempotency",operation="${cluster.namespace}:payment-capture:v1",outcome="foreign_claim"} 1`,
    );
    expect(await cluster.claimants()).toEqual(['billing-api', 'orders-api']);

    await Promise.all([cluster.stop(orders), cluster.stop(billing)]);
    // Both withdrew on shutdown.
    expect(await cluster.claimants()).toEqual([]);
  }, 240_000);

  it('three replicas of one service boot; one stopping keeps the others’ claims; a killed one’s lapses', async () => {
    const heartbeat = { claims: { ttl: 2_000, renewEvery: 500 } };
    const replicas = (
      await Promise.all(
        ['a', 'b', 'c'].map((name) => boot('ledger-api', `ledger-${name}`, heartbeat)),
      )
    ).map(bootedNode);
    for (const replica of replicas) expect(claimEvents(replica)).toEqual([]);
    expect(await cluster.claimants()).toEqual(['ledger-api', 'ledger-api', 'ledger-api']);

    await cluster.stop(replicas[0]!);
    await sleep(2_500); // past the TTL: the others keep renewing theirs
    expect(await cluster.claimants()).toEqual(['ledger-api', 'ledger-api']);
    expect(refusedBoot(await boot('audit-api', 'audit-1')).message).toContain('"ledger-api"');

    await cluster.stop(replicas[1]!);
    replicas[2]!.worker.kill(); // SIGKILL: no withdrawal, its entry lapses by itself
    await replicas[2]!.worker.exited;
    expect(await cluster.claimants()).toEqual(['ledger-api']);
    await sleep(2_500);
    expect(await cluster.claimants()).toEqual([]);
    const audit = bootedNode(await boot('audit-api', 'audit-2'));
    expect(claimEvents(audit)).toEqual([]);
    await cluster.stop(audit);
  }, 240_000);
});
