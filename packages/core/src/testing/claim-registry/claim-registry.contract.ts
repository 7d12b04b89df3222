import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ClaimCheck, ClaimRegistry } from '../../registry/claim-registry.port.js';
import type { RegistryClaim } from '../../registry/registry-claim.js';
import { contractCases, type ContractCase, type ContractFixture } from '../contract-case.js';

/** A claim registry under test, with the fixture every contract case needs. */
export interface ClaimRegistryHarness extends ContractFixture {
  /** The registry under test. */
  readonly registry: ClaimRegistry;
  /**
   * A second handle on the same backend (another connection, as another process has), or the
   * same registry when the backend is one process's.
   */
  readonly peer: ClaimRegistry;
}

/** Builds a fresh harness for one case. */
export type ClaimRegistryHarnessFactory = () =>
  ClaimRegistryHarness | Promise<ClaimRegistryHarness>;

/** Options of `claimRegistryContract`. */
export interface ClaimRegistryContractOptions {
  /** The short entry TTL of the expiry cases, in milliseconds (default 400). */
  readonly ttlMs?: number;
  /** How many services announce one operation at once in the concurrency case (default 8). */
  readonly concurrency?: number;
}

const longTtl = 60_000;

/**
 * The cases every `ClaimRegistry` passes: conflicts between services, `shared` on both sides,
 * replicas of one service, expiry of a dead instance's entries, withdrawal keeping the other
 * replicas' entries, and concurrent announcements. Each case uses a namespace of its own.
 */
export function claimRegistryContract(
  factory: ClaimRegistryHarnessFactory,
  options: ClaimRegistryContractOptions = {},
): ContractCase[] {
  const ttlMs = options.ttlMs ?? 400;
  const concurrency = options.concurrency ?? 8;
  return contractCases(factory, {
    'a second service claiming the operation conflicts, naming both services and routes': async ({
      registry,
      peer,
    }) => {
      const ns = namespace();
      const orders = claimOf(ns, 'orders-api', 'OrdersController.pay');
      const billing = claimOf(ns, 'billing-api', 'BillingController.pay');
      assert.deepEqual(await announce(registry, 'o-1', orders), { kind: 'clear' });
      assert.deepEqual(await announce(peer, 'b-1', billing), {
        kind: 'conflicts',
        conflicts: [{ claim: billing, foreign: orders }],
      });
      // The first one's renewal sees the second one too.
      assert.deepEqual(await announce(registry, 'o-1', orders), {
        kind: 'conflicts',
        conflicts: [{ claim: orders, foreign: billing }],
      });
    },
    'other mechanisms, versions and namespaces do not conflict': async ({ registry, peer }) => {
      const ns = namespace();
      await announce(registry, 'o-1', claimOf(ns, 'orders-api', 'A.pay'));
      const others = [
        { ...claimOf(ns, 'billing-api', 'B.pay'), mechanism: 'single-flight' as const },
        { ...claimOf(ns, 'billing-api', 'B.pay'), version: 'v2' },
        claimOf(namespace(), 'billing-api', 'B.pay'),
      ];
      for (const [i, other] of others.entries()) {
        assert.deepEqual(await announce(peer, `b-${i}`, other), { kind: 'clear' });
      }
    },
    'routes of two services that both say shared: true do not conflict; one alone does': async ({
      registry,
      peer,
    }) => {
      const ns = namespace();
      const orders = { ...claimOf(ns, 'orders-api', 'A.pay'), shared: true };
      await announce(registry, 'o-1', orders);
      const billing = { ...claimOf(ns, 'billing-api', 'B.pay'), shared: true };
      assert.deepEqual(await announce(peer, 'b-1', billing), { kind: 'clear' });
      const audit = claimOf(ns, 'audit-api', 'C.pay');
      const check = await announce(peer, 'c-1', audit);
      assert.equal(check.kind, 'conflicts');
      assert.deepEqual(foreignOwners(check), ['billing-api', 'orders-api']);
    },
    'replicas of one service hold the claim side by side without conflict': async ({
      registry,
      peer,
    }) => {
      const ns = namespace();
      const checks = await Promise.all(
        ['r-1', 'r-2', 'r-3'].map((instance, i) =>
          announce(i % 2 === 0 ? registry : peer, instance, claimOf(ns, 'ledger-api', 'L.pay')),
        ),
      );
      assert.deepEqual(checks, [{ kind: 'clear' }, { kind: 'clear' }, { kind: 'clear' }]);
      const check = await announce(peer, 'x-1', claimOf(ns, 'other-api', 'X.pay'));
      assert.equal(check.kind === 'conflicts' && check.conflicts.length, 3);
    },
    'the entries of an instance that stops renewing lapse after their TTL': async ({
      registry,
      peer,
      advance,
    }) => {
      const ns = namespace();
      await announce(registry, 'dead', claimOf(ns, 'orders-api', 'A.pay'), ttlMs);
      const billing = claimOf(ns, 'billing-api', 'B.pay');
      assert.equal((await announce(peer, 'b-1', billing)).kind, 'conflicts');
      await advance(ttlMs + Math.max(100, ttlMs / 2));
      assert.deepEqual(await announce(peer, 'b-1', billing), { kind: 'clear' });
    },
    'a replica withdrawing takes away its own entry only': async ({ registry, peer }) => {
      const ns = namespace();
      const ledger = claimOf(ns, 'ledger-api', 'L.pay');
      await announce(registry, 'r-1', ledger);
      await announce(registry, 'r-2', ledger);
      await registry.withdraw('r-1', [ledger]);
      const other = claimOf(ns, 'other-api', 'X.pay');
      const check = await announce(peer, 'x-1', other);
      assert.deepEqual(check, {
        kind: 'conflicts',
        conflicts: [{ claim: other, foreign: ledger }],
      });
      await registry.withdraw('r-2', [ledger]);
      assert.deepEqual(await announce(peer, 'x-1', other), { kind: 'clear' });
    },
    'of services announcing one operation at once, each pair is seen by at least one of the two':
      async ({ registry, peer }) => {
        const ns = namespace();
        const services = Array.from({ length: concurrency }, (_, i) => `svc-${i}`);
        const checks = await Promise.all(
          services.map((service, i) =>
            announce(i % 2 === 0 ? registry : peer, `i-${i}`, claimOf(ns, service, `R${i}.pay`)),
          ),
        );
        const seen = new Set<string>();
        checks.forEach((check, i) => {
          for (const owner of foreignOwners(check)) seen.add([services[i], owner].sort().join('|'));
        });
        assert.equal(seen.size, (concurrency * (concurrency - 1)) / 2);
      },
  });
}

function namespace(): string {
  return `claims-${randomUUID().slice(0, 12)}`;
}

function announce(
  registry: ClaimRegistry,
  instance: string,
  claim: RegistryClaim,
  ttlMs = longTtl,
): Promise<ClaimCheck> {
  return registry.announce({ instance, claims: [claim], ttlMs });
}

function foreignOwners(check: ClaimCheck): string[] {
  if (check.kind === 'clear') return [];
  return check.conflicts.map(({ foreign }) => foreign.owner).sort();
}

/** An idempotency claim on `<namespace>:payment-capture:v1`. */
function claimOf(namespace: string, owner: string, route: string): RegistryClaim {
  return {
    operation: 'payment-capture',
    version: 'v1',
    namespace,
    mechanism: 'idempotency',
    owner,
    route,
    scope: ['user.tenantId'],
    target: [],
    input: ['body'],
    clientKey: 'required',
    shared: false,
    fingerprintBits: 128,
    ttl: { lease: 30_000, retention: 86_400_000, replayCache: 60_000 },
    maxDuration: 300_000,
  };
}
