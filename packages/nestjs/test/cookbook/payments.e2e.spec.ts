import { ACME, startCookbookApp, type Caller, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import { PaymentProvider, PaymentsController } from './payments.controller.js';

describe('cookbook: payment (request number and attempt, built by the server)', () => {
  let shop: CookbookApp;
  let provider: PaymentProvider;

  beforeAll(async () => {
    shop = await startCookbookApp({
      controllers: [PaymentsController],
      providers: [PaymentProvider],
    });
    provider = shop.get(PaymentProvider);
  });

  afterAll(() => shop.close());

  const payment = (paymentRequestNo: string, changes: object = {}) => ({
    paymentRequestNo,
    attemptId: 'att-1',
    orderId: 'order-1001',
    amount: '100.00',
    currency: 'EUR',
    paymentMethod: 'card-visa',
    ...changes,
  });
  const submit = (body: object, caller: Caller = ACME) => shop.post('/payments', body, caller);
  const charges = (paymentRequestNo: string) =>
    provider.charges.filter((charge) => charge.paymentRequestNo === paymentRequestNo).length;

  it('replays a retry of the same attempt: one charge, the same 201', async () => {
    const first = await submit(payment('pay-replay')).set('x-request-id', 'trace-a');
    const retry = await submit(payment('pay-replay')).set('x-request-id', 'trace-b');
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(charges('pay-replay')).toBe(1);
    expect(shop.keys('shop:payment-submit:v1', 'executed')).toContain(
      'shop:payment-submit:v1:acme:pay-replay,att-1',
    );
  });

  it('charges concurrent duplicates once; each waits and gets the same payment', async () => {
    provider.gate = new Gate();
    const first = submit(payment('pay-busy')).then((response) => response);
    await provider.gate.entered;
    const duplicates = [1, 2, 3].map(() => submit(payment('pay-busy')).then((r) => r));
    provider.gate.open();
    provider.gate = undefined;
    const responses = await Promise.all([first, ...duplicates]);
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201, 201]);
    for (const response of responses) expect(response.body).toEqual(responses[0].body);
    expect(charges('pay-busy')).toBe(1);
  });

  it('refuses the same attempt with another amount (422), charging nothing more', async () => {
    await submit(payment('pay-amount', { amount: '100.00' }));
    const changed = await submit(payment('pay-amount', { amount: '1000.00' }));
    expect(changed.status).toBe(422);
    expect(changed.body.type).toBe('urn:oncely:problem:payload-mismatch');
    expect(charges('pay-amount')).toBe(1);
  });

  it('keeps a decline: the same attempt retried gets its 402 again, without a charge', async () => {
    const declined = await submit(payment('pay-decline', { paymentMethod: 'card-declined' }));
    const retry = await submit(payment('pay-decline', { paymentMethod: 'card-declined' }));
    expect(declined.status).toBe(402);
    expect(declined.body).toEqual({ status: 'declined', reason: 'do-not-honor' });
    expect(retry.status).toBe(402);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(charges('pay-decline')).toBe(1);
  });

  it('keeps nothing of a provider timeout: the same attempt retried is charged', async () => {
    provider.down = true;
    const timedOut = await submit(payment('pay-timeout'));
    provider.down = false;
    const retry = await submit(payment('pay-timeout'));
    expect(timedOut.status).toBe(503);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(charges('pay-timeout')).toBe(1);
  });

  it('refuses a new attempt on a request already paid (409, the unique constraint)', async () => {
    await submit(payment('pay-paid', { attemptId: 'att-1' }));
    const again = await submit(payment('pay-paid', { attemptId: 'att-2' }));
    expect(again.status).toBe(409);
    expect(charges('pay-paid')).toBe(1);
  });

  describe('reverse tests: alike, yet different payments', () => {
    it('charges a new attempt after a decline', async () => {
      const declined = await submit(
        payment('pay-retry', { attemptId: 'att-1', paymentMethod: 'card-declined' }),
      );
      const next = await submit(
        payment('pay-retry', { attemptId: 'att-2', paymentMethod: 'card-mastercard' }),
      );
      expect(declined.status).toBe(402);
      expect(next.status).toBe(201);
      expect(next.body.status).toBe('captured');
      expect(charges('pay-retry')).toBe(2);
    });

    it('pays two request numbers for the same order and amount (two instalments)', async () => {
      const first = await submit(payment('pay-part-1'));
      const second = await submit(payment('pay-part-2'));
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.body.paymentId).not.toBe(first.body.paymentId);
      expect(charges('pay-part-1') + charges('pay-part-2')).toBe(2);
    });

    it("pays another merchant's request carrying the same number", async () => {
      const acme = await submit(payment('pay-merchants'), { tenant: 'acme' });
      const globex = await submit(payment('pay-merchants'), { tenant: 'globex' });
      expect([acme.status, globex.status]).toEqual([201, 201]);
      expect(globex.headers['idempotent-replayed']).toBeUndefined();
      expect(charges('pay-merchants')).toBe(2);
    });
  });
});
