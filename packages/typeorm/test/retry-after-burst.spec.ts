import { randomUUID } from 'node:crypto';
import { InMemoryFlightCoordinator, toProblemResponse } from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
  type HttpResponse,
} from '@oncely/core/adapter';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { deferred } from './support/deferred.js';
import { recordDatabases } from './support/record-databases.js';

const leaseTtl = 30_000;
const route = defineProtectedRoute(
  'Payments.capture',
  { idempotent: { operation: 'capture', scope: 'user.tenant', leaseTtl } },
  { ...DEFAULT_PROTECTION, namespace: 'burst' },
);
const postgres = recordDatabases().filter(([name]) => name === 'postgres');

describe.each(postgres)('Retry-After of a burst of in-flight duplicates, %s', (_, database) => {
  beforeAll(() => database.setUp());
  afterAll(() => database.tearDown());

  it("gives every 409 the time left on the first request's lease, rounded up, on both nodes", async () => {
    // Two nodes on one database, each with its own coordinator: duplicates on the first node
    // meet its running call, those on the second meet the record.
    const nodes = await Promise.all(
      [0, 1].map(async () => {
        const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
        const store = new TypeOrmIdempotencyRecordStore(await database.connect(4));
        return {
          coordinator,
          executor: new ProtectedCallExecutor(createProtectionEngines({ coordinator, store })),
        };
      }),
    );
    const key = randomUUID();
    const entered = deferred();
    const release = deferred();
    const call = (node: (typeof nodes)[number]) =>
      node.executor.execute({
        route,
        keys: resolveCallKeys(route, {
          body: { amount: '10.00' },
          headers: { 'idempotency-key': key },
          user: { tenant: 't-1' },
        }),
        handler: async (): Promise<HttpResponse> => {
          entered.resolve();
          await release.promise;
          return { status: 201, headers: {}, body: { kind: 'json', value: { captured: true } } };
        },
      });

    const retryAfters = async (burst: Array<Promise<unknown>>) =>
      (
        await Promise.all(
          burst.map((refused) =>
            refused.then(
              () => 'answered',
              (error: unknown) => {
                const problem = toProblemResponse(error);
                return `${problem?.status} ${problem?.headers['retry-after']}`;
              },
            ),
          ),
        )
      ).join(', ');
    const burstOf = (node: (typeof nodes)[number], size: number) =>
      Array.from({ length: size }, () => call(node));
    const all = (answer: string, size: number) => Array(size).fill(answer).join(', ');

    // Duplicates sent with the first request: some join it while it still reads the record.
    const first = call(nodes[0]!);
    const withFirst = retryAfters(burstOf(nodes[0]!, 11));
    await entered.promise;
    expect(await withFirst).toBe(all('409 30', 11));

    // Later, some of the lease gone, none of it renewed yet (a renewal comes at a third of it):
    // the second node reads what is left of it from the record.
    await new Promise((done) => setTimeout(done, 2_500));
    expect(await retryAfters(burstOf(nodes[1]!, 12))).toBe(all('409 28', 12));
    // On the first node each duplicate confirms the lease with the database, which renews it:
    // both nodes then tell of the renewed lease.
    expect(await retryAfters(burstOf(nodes[0]!, 12))).toBe(all('409 30', 12));
    expect(await retryAfters(burstOf(nodes[1]!, 12))).toBe(all('409 30', 12));

    release.resolve();
    expect((await first).response.status).toBe(201);
    await Promise.all(nodes.map(({ coordinator }) => coordinator.close()));
  });
});
