import { ForeignClaimError, type OncelyEvent } from '@oncely/core';
import type { Oncely } from '@oncely/express';
import { redisPostgresBackend } from './fixtures/backends.js';

/**
 * `oncely.start()` registers the claims of the middleware created so far where the records go
 * (PostgreSQL for idempotency, Redis for SingleFlight) and `close()` withdraws them.
 */
describe('Express apps of two services on one Redis and one PostgreSQL', () => {
  const backend = redisPostgresBackend();
  const opened: Oncely[] = [];

  beforeAll(() => backend.start());
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((oncely) => oncely.close()));
  });
  afterAll(() => backend.stop());

  async function app(service: string, options: object = {}): Promise<Oncely> {
    const oncely = await backend.oncely({ service, ...options });
    opened.push(oncely);
    oncely.idempotent({ name: `${service} POST /payments`, operation: 'pay', scope: 'user.id' });
    oncely.singleFlight({ name: `${service} GET /quote`, operation: 'quote', scope: 'user.id' });
    return oncely;
  }

  it('refuses the second service’s start naming both, and lets it start with warn', async () => {
    await (await app('orders-api')).start();

    const refused = await (await app('billing-api')).start().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ForeignClaimError);
    expect(
      (refused as ForeignClaimError).conflicts.map(({ claim, foreign }) => [
        claim.mechanism,
        claim.route,
        foreign.route,
      ]),
    ).toEqual([
      ['idempotency', 'billing-api POST /payments', 'orders-api POST /payments'],
      ['single-flight', 'billing-api GET /quote', 'orders-api GET /quote'],
    ]);

    const events: OncelyEvent[] = [];
    // Express has no logger of its own: the warning goes to console.warn.
    const { warn } = console;
    const warnings: string[] = [];
    console.warn = (message: string) => warnings.push(message);
    try {
      const warned = await app('billing-api', {
        onForeignClaim: 'warn',
        events: (event: OncelyEvent) => events.push(event),
      });
      await expect(warned.start()).resolves.toBeUndefined();
      expect(warnings).toEqual([
        expect.stringMatching(/^Service "billing-api" \(billing-api POST \/payments\)/),
        expect.stringMatching(/^Service "billing-api" \(billing-api GET \/quote\)/),
      ]);
      expect(events.map(({ outcome, mechanism }) => `${mechanism}:${outcome}`)).toEqual([
        'idempotency:foreign_claim',
        'single-flight:foreign_claim',
      ]);
    } finally {
      console.warn = warn;
    }
  });

  it('lets a second replica of one service start, and the other service once both closed', async () => {
    const first = await app('ledger-api');
    const second = await app('ledger-api');
    await first.start();
    await second.start();
    await first.close();
    await expect((await app('audit-api')).start()).rejects.toThrow(ForeignClaimError);
    await second.close();
    await expect((await app('audit-api')).start()).resolves.toBeUndefined();
  });
});
