import {
  ForeignClaimError,
  InMemoryClaimRegistry,
  OncelyConfigurationError,
  createOncelyEngine,
  type ClaimAnnouncement,
  type OncelyEngine,
  type OncelyEngineOptions,
  type OncelyEvent,
} from '@oncely/core';
import { setTimeout as sleep } from 'node:timers/promises';

/** A logger keeping the warnings and dropping the start-up lines. */
function warningsInto(warnings: string[]): OncelyEngineOptions['logger'] {
  return { log: () => undefined, warn: (message) => warnings.push(message) };
}

/** Engines registering their claims in one registry, as services sharing one backend do. */
describe('claim registration at start-up', () => {
  const created: OncelyEngine[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((built) => built.close()));
  });

  function engine(
    registry: InMemoryClaimRegistry,
    service: string,
    route: string,
    options: Partial<OncelyEngineOptions> = {},
  ): OncelyEngine {
    const built = createOncelyEngine({
      namespace: 'shop',
      service,
      claims: { registry, ttl: 300, renewEvery: 50 },
      ...options,
    });
    created.push(built);
    built.defineRoute(route, {
      idempotent: { operation: 'payment-capture', scope: 'user.tenantId' },
    });
    return built;
  }

  it('fails the second service’s boot naming both services and routes, and closes its engine', async () => {
    const registry = new InMemoryClaimRegistry();
    await engine(registry, 'orders-api', 'OrdersController.pay').registerClaims();
    const billing = engine(registry, 'billing-api', 'BillingController.pay');

    const error = await billing.registerClaims().catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ForeignClaimError);
    expect(error).toBeInstanceOf(OncelyConfigurationError);
    expect((error as ForeignClaimError).code).toBe('foreign_claim');
    expect((error as Error).message).toMatch(
      /Service "billing-api" \(BillingController\.pay\) claims idempotency operation "shop:payment-capture:v1", which service "orders-api" \(OrdersController\.pay\) already claims/,
    );
    expect((error as Error).message).toMatch(/Rename the namespace or the operation/);
    expect((error as Error).message).toMatch(/shared: true/);
    expect((error as Error).message).toContain(
      'if they are one service being renamed, list the other name in serviceAliases (docs/shared-claims.md#renaming-a-service)',
    );
    expect((error as ForeignClaimError).conflicts).toHaveLength(1);
  });

  it('warns once and emits one foreign_claim event under onForeignClaim: warn', async () => {
    const registry = new InMemoryClaimRegistry();
    await engine(registry, 'orders-api', 'OrdersController.pay').registerClaims();
    const events: OncelyEvent[] = [];
    const warnings: string[] = [];
    const billing = engine(registry, 'billing-api', 'BillingController.pay', {
      onForeignClaim: 'warn',
      events: (event) => events.push(event),
      logger: warningsInto(warnings),
    });

    await billing.registerClaims();
    await sleep(200); // a few renewals, each seeing the same conflict

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"billing-api".*"orders-api"/);
    expect(events).toEqual([
      {
        mechanism: 'idempotency',
        outcome: 'foreign_claim',
        operation: 'shop:payment-capture:v1',
        key: 'shop:payment-capture:v1',
        owner: 'billing-api',
        foreignOwner: 'orders-api',
      },
    ]);
  });

  it('lets replicas of one service boot, keeps renewing, and withdraws only its own entries on close', async () => {
    const registry = new InMemoryClaimRegistry();
    const replicas = ['a', 'b', 'c'].map(() => engine(registry, 'ledger-api', 'Ledger.pay'));
    await Promise.all(replicas.map((replica) => replica.registerClaims()));
    await sleep(500); // past the 300 ms TTL: renewals keep the entries alive

    await replicas[0]!.close();
    const warnings: string[] = [];
    const other = engine(registry, 'other-api', 'Other.pay', {
      onForeignClaim: 'warn',
      logger: warningsInto(warnings),
    });
    await other.registerClaims();
    expect(warnings).toHaveLength(1);

    await Promise.all(replicas.map((replica) => replica.close()));
    const last = engine(registry, 'last-api', 'Last.pay');
    await expect(last.registerClaims()).rejects.toThrow(/"other-api"/);
  });

  it('lets a service being renamed boot beside the names it lists in serviceAliases, through every step, and still fails an unrelated one', async () => {
    const registry = new InMemoryClaimRegistry();
    const warnings: string[] = [];
    const events: OncelyEvent[] = [];
    const seen = {
      events: (event: OncelyEvent) => events.push(event),
      logger: warningsInto(warnings),
    };
    // Step 0: the fleet as it runs. Step 1 rolls out beside it: the old name, accepting the new.
    const step0 = engine(registry, 'shop', 'Orders.pay', seen);
    await step0.registerClaims();
    await engine(registry, 'shop', 'Orders.pay', {
      ...seen,
      serviceAliases: ['shop-api'],
    }).registerClaims();
    await step0.close();
    // Step 2: the new name, accepting the old one, beside the step-1 replicas.
    await engine(registry, 'shop-api', 'Orders.pay', {
      ...seen,
      serviceAliases: ['shop'],
    }).registerClaims();
    await sleep(200); // a few renewals of the step-1 replica, which now sees shop-api's claim

    const unrelated = engine(registry, 'billing-api', 'Billing.pay');
    const refused = await unrelated.registerClaims().catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(ForeignClaimError);
    expect((refused as ForeignClaimError).conflicts.map(({ foreign }) => foreign.owner)).toEqual([
      'shop',
      'shop-api',
    ]);
    // Step 3, once the old name is gone: the new name alone.
    await created[1]!.close();
    await engine(registry, 'shop-api', 'Orders.pay', seen).registerClaims();

    expect(warnings).toEqual([]);
    expect(events).toEqual([]);
  });

  it('lets a dead instance’s claim lapse after the TTL', async () => {
    const registry = new InMemoryClaimRegistry();
    await registry.announce({
      instance: 'crashed',
      claims: engine(registry, 'orders-api', 'Orders.pay').claims(),
      ttlMs: 100,
    });
    await sleep(150);
    await expect(engine(registry, 'billing-api', 'Billing.pay').registerClaims()).resolves.toBe(
      undefined,
    );
  });

  it('warns and keeps booting while the registry cannot be reached', async () => {
    const registry = new InMemoryClaimRegistry();
    let down = true;
    const announce = registry.announce.bind(registry);
    registry.announce = async (announcement: ClaimAnnouncement) => {
      if (down) throw new Error('connection refused');
      return announce(announcement);
    };
    const warnings: string[] = [];
    const built = engine(registry, 'orders-api', 'Orders.pay', { logger: warningsInto(warnings) });
    await built.registerClaims();
    expect(warnings).toEqual([expect.stringMatching(/could not register.*connection refused/)]);
    down = false;
    await sleep(120);
    await expect(engine(registry, 'billing-api', 'Billing.pay').registerClaims()).rejects.toThrow(
      ForeignClaimError,
    );
  });

  it('waits bootTimeout at most for a registry that does not answer, warns once, and reports a conflict it reveals later', async () => {
    const registry = new InMemoryClaimRegistry();
    await engine(registry, 'orders-api', 'Orders.pay').registerClaims();
    const announce = registry.announce.bind(registry);
    let answer: () => void = () => undefined;
    // Billing's announcement hangs until the test answers it; the orders replica renews as usual.
    registry.announce = (announcement: ClaimAnnouncement) =>
      announcement.claims[0]?.owner === 'billing-api'
        ? new Promise((resolve) => (answer = () => resolve(announce(announcement))))
        : announce(announcement);
    const warnings: string[] = [];
    const billing = engine(registry, 'billing-api', 'Billing.pay', {
      claims: { registry, ttl: 60_000, renewEvery: 20_000 },
      bootTimeout: 100,
      logger: warningsInto(warnings),
    });

    const startedAt = Date.now();
    await billing.registerClaims();
    const waited = Date.now() - startedAt;

    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(400);
    expect(warnings).toEqual([
      "oncely could not register this app's claims (no answer within 100 ms); other services claiming the same operations go unnoticed until it can. Retrying every 20000 ms.",
    ]);
    answer();
    await sleep(20);
    // Too late to fail the boot: the conflict is warned about instead.
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/^Service "billing-api" \(Billing\.pay\) claims/);
  });

  it('checks its options', () => {
    expect(() =>
      createOncelyEngine({ namespace: 'shop', onForeignClaim: 'ignore' as 'warn' }),
    ).toThrow(/onForeignClaim.*'fail'.*'warn'/);
    expect(() =>
      createOncelyEngine({ namespace: 'shop', claims: { ttl: 1_000, renewEvery: 1_000 } }),
    ).toThrow(/claims\.renewEvery.*below "claims\.ttl"/);
  });

  it('registers nothing on the in-memory defaults or with claims: false', async () => {
    const built = createOncelyEngine({ namespace: 'shop' });
    created.push(built);
    await expect(built.registerClaims()).resolves.toBeUndefined();
    const off = createOncelyEngine({ namespace: 'shop', claims: false });
    created.push(off);
    await expect(off.registerClaims()).resolves.toBeUndefined();
  });
});
