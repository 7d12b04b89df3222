import { BodyNotParsedError } from '@oncely/core';
import { DEFAULT_PROTECTION, defineProtectedRoute, httpCallKeys } from '@oncely/core/adapter';

const defaults = { ...DEFAULT_PROTECTION, namespace: 'shop' };
const pay = defineProtectedRoute(
  'POST /payments',
  { idempotent: { operation: 'pay', scope: 'user.tenantId' } },
  defaults,
);
const quote = defineProtectedRoute(
  'GET /quotes',
  { singleFlight: { operation: 'quote', target: 'query.sku', input: 'query' } },
  defaults,
);
const headers = { 'idempotency-key': 'k-1' };
const user = { tenantId: 't-1' };
const multipart = { 'content-type': 'multipart/form-data; boundary=x', 'idempotency-key': 'k-1' };

describe('httpCallKeys', () => {
  it('keys the request context: the same body the same identity, another body another', async () => {
    const first = await httpCallKeys(pay, { body: { amount: '10.00' }, headers, user });
    const again = await httpCallKeys(pay, { body: { amount: '10.00' }, headers, user });
    const other = await httpCallKeys(pay, { body: { amount: '99.00' }, headers, user });

    expect(first.idempotency).toEqual(again.idempotency);
    expect(first.idempotency?.identity).toContain('k-1');
    expect(other.idempotency?.identity).toBe(first.idempotency?.identity);
    expect(other.idempotency?.fingerprint).not.toBe(first.idempotency?.fingerprint);
  });

  it('refuses a route reading the body when no parser ran, and a multipart body still unread', async () => {
    await expect(httpCallKeys(pay, { headers, user })).rejects.toMatchObject({
      constructor: BodyNotParsedError,
      route: 'POST /payments',
      reason: 'no-body-parser',
    });
    const express = { body: undefined, headers: multipart, user, readableEnded: false };
    await expect(httpCallKeys(pay, express)).rejects.toMatchObject({
      reason: 'multipart-not-parsed',
    });
    const fastify = { body: undefined, headers: multipart, user, raw: express };
    await expect(httpCallKeys(pay, fastify)).rejects.toMatchObject({
      reason: 'multipart-not-parsed',
    });
  });

  it('makes neither check for a route that does not read the body, or whose layers parse it', async () => {
    const unread = { headers: multipart, query: { sku: 's-1' }, readableEnded: false };
    await expect(httpCallKeys(quote, unread)).resolves.toMatchObject({
      singleFlight: expect.any(Object),
    });
    const parsedLater = { body: { amount: '1' }, headers: multipart, user, readableEnded: false };
    await expect(httpCallKeys(pay, parsedLater, { bodyParsed: true })).resolves.toMatchObject({
      idempotency: expect.any(Object),
    });
  });

  it("keys the validated body, which replaces the request body, and the hooks' user and context", async () => {
    const request = { body: { amount: '10.00', noise: 'x' }, headers };
    const keys = await httpCallKeys(pay, request, {
      validate: async (body) => ({ amount: (body as { amount: string }).amount }),
      user: async () => user,
    });
    const plain = await httpCallKeys(pay, { body: { amount: '10.00' }, headers, user });

    expect(request.body).toEqual({ amount: '10.00' });
    expect(keys.idempotency).toEqual(plain.idempotency);

    const seen: unknown[] = [];
    const hooked = await httpCallKeys(
      pay,
      { body: { amount: '10.00' }, headers },
      {
        keyContext: (base) => {
          seen.push(base);
          return { ...base, user: { tenantId: 't-2' } };
        },
      },
    );
    expect(seen).toEqual([expect.objectContaining({ body: { amount: '10.00' }, headers })]);
    expect(hooked.idempotency?.identity).not.toBe(plain.idempotency?.identity);
  });

  it('keys uploaded files by the SHA-256 of their bytes', async () => {
    const upload = (bytes: string) => ({
      body: { amount: '10.00' },
      headers,
      user,
      file: { fieldname: 'receipt', buffer: Buffer.from(bytes) },
    });
    const first = await httpCallKeys(pay, upload('scan-1'));
    const same = await httpCallKeys(pay, upload('scan-1'));
    const other = await httpCallKeys(pay, upload('scan-2'));

    expect(same.idempotency).toEqual(first.idempotency);
    expect(other.idempotency?.fingerprint).not.toBe(first.idempotency?.fingerprint);
  });
});
