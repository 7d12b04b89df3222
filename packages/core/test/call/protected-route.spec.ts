import {
  IdempotencyKeyMalformedError,
  IdempotencyKeyMissingError,
  MissingKeyFieldError,
  OperationClaimConflictError,
  RouteOptionsError,
  UnauthenticatedError,
  type IdempotentRouteOptions,
} from '@oncely/core';
import { DEFAULT_PROTECTION, defineProtectedRoute, resolveCallKeys } from '@oncely/core/adapter';
import { OperationRegistry } from '../../src/call/operation-registry.js';

const defaults = { ...DEFAULT_PROTECTION, namespace: 'shop' };
const ctx = (headers: Record<string, string>, user: unknown = { tenantId: 't-1' }) => ({
  body: { amount: '10.00' },
  headers,
  user,
});
const idempotent = (options: Partial<IdempotentRouteOptions> = {}) =>
  defineProtectedRoute(
    'PayController.pay',
    { idempotent: { operation: 'pay', scope: 'user.tenantId', ...options } },
    defaults,
  );

describe('defineProtectedRoute', () => {
  it('resolves defaults and names the operation', () => {
    const route = idempotent();
    expect(route.idempotent).toMatchObject({
      operation: 'shop:pay:v1',
      idempotencyKey: 'required',
      header: 'idempotency-key',
      onBusy: 'reject',
      leaseTtl: DEFAULT_PROTECTION.leaseTtl,
      transactional: false,
    });
  });

  it.each([
    [{ onBusy: 'later' }, 'onBusy'],
    [{ wait: -1 }, 'wait'],
    [{ leaseTtl: 0 }, 'leaseTtl'],
    [{ idempotencyKey: 'maybe' }, 'idempotencyKey'],
    [{ header: 'bad header' }, 'header'],
    [{ transactional: 'yes' }, 'transactional'],
    [{ resultTtl: 5 }, 'resultTtl'],
    [{ fingerprintBits: 8 }, 'key spec'],
  ])('refuses %p naming %s', (options, option) => {
    expect(() => idempotent(options as never)).toThrow(RouteOptionsError);
    expect(() => idempotent(options as never)).toThrow(
      new RegExp(`"${option}" on PayController\\.pay`),
    );
  });

  it('requires a scope whenever a client key joins the identity', () => {
    expect(() => defineProtectedRoute('R', { idempotent: { operation: 'pay' } }, defaults)).toThrow(
      /"scope"/,
    );
    expect(() =>
      defineProtectedRoute(
        'R',
        { idempotent: { operation: 'pay', idempotencyKey: 'ignored', target: 'body.ref' } },
        defaults,
      ),
    ).not.toThrow();
  });
});

describe('resolveCallKeys', () => {
  it('joins the client key to the identity, combined with the scope', () => {
    const route = idempotent();
    const a = resolveCallKeys(route, ctx({ 'idempotency-key': 'k-1' }));
    const quoted = resolveCallKeys(route, ctx({ 'idempotency-key': '"k-1"' }));
    const otherTenant = resolveCallKeys(
      route,
      ctx({ 'idempotency-key': 'k-1' }, { tenantId: 't-2' }),
    );
    const otherKey = resolveCallKeys(route, ctx({ 'idempotency-key': 'k-2' }));
    expect(a.idempotency?.identity).toBe('shop:pay:v1:t-1:k-1');
    expect(quoted.idempotency).toEqual(a.idempotency);
    expect(otherTenant.idempotency?.identity).toBe('shop:pay:v1:t-2:k-1');
    expect(otherKey.idempotency?.identity).not.toBe(a.idempotency?.identity);
    expect(otherKey.idempotency?.digest).toBe(a.idempotency?.digest);
  });

  it('escapes client keys and hashes long ones, so they cannot forge segments', () => {
    const route = idempotent();
    const forged = resolveCallKeys(route, ctx({ 'idempotency-key': '"x:y,z"' }));
    expect(forged.idempotency?.identity).toBe('shop:pay:v1:t-1:x%3Ay%2Cz');
    const long = resolveCallKeys(route, ctx({ 'idempotency-key': 'k'.repeat(200) }));
    expect(long.idempotency?.identity).toMatch(/^shop:pay:v1:t-1:%~[0-9a-f]{32}$/);
  });

  it("appends the client key after the route's own target", () => {
    const route = idempotent({ target: 'body.amount' });
    expect(resolveCallKeys(route, ctx({ 'idempotency-key': 'k' })).idempotency?.identity).toBe(
      'shop:pay:v1:t-1:10.00,k',
    );
  });

  it('reads the header as the route says', () => {
    expect(() => resolveCallKeys(idempotent(), ctx({}))).toThrow(IdempotencyKeyMissingError);
    expect(() => resolveCallKeys(idempotent(), ctx({ 'idempotency-key': 'a b' }))).toThrow(
      IdempotencyKeyMalformedError,
    );
    const optional = idempotent({ idempotencyKey: 'optional' });
    expect(resolveCallKeys(optional, ctx({})).idempotency?.identity).toBe('shop:pay:v1:t-1:');
    expect(() => resolveCallKeys(optional, ctx({ 'idempotency-key': 'a b' }))).toThrow(
      IdempotencyKeyMalformedError,
    );
    const ignored = idempotent({ idempotencyKey: 'ignored', target: 'body.amount' });
    expect(resolveCallKeys(ignored, ctx({ 'idempotency-key': 'a b' })).idempotency?.identity).toBe(
      'shop:pay:v1:t-1:10.00',
    );
    const custom = idempotent({ header: 'X-Request-Key' });
    expect(resolveCallKeys(custom, ctx({ 'x-request-key': 'k' })).idempotency?.identity).toBe(
      'shop:pay:v1:t-1:k',
    );
  });

  it('answers a missing principal with 400 by default, 401 where the route says so', () => {
    const headers = { 'idempotency-key': 'k' };
    expect(() => resolveCallKeys(idempotent(), ctx(headers, null))).toThrow(MissingKeyFieldError);
    expect(() =>
      resolveCallKeys(idempotent({ missingUserStatus: 401 }), ctx(headers, null)),
    ).toThrow(UnauthenticatedError);
  });
});

describe('OperationRegistry', () => {
  const route = (name: string, options: Partial<IdempotentRouteOptions> = {}) =>
    defineProtectedRoute(
      name,
      { idempotent: { operation: 'refund', scope: 'user.tenantId', ...options } },
      defaults,
    );

  it('refuses a second route claiming one operation, even with identical options, naming both', () => {
    const registry = new OperationRegistry();
    registry.register(route('A.refund'));
    expect(() => registry.register(route('B.refund'))).toThrow(OperationClaimConflictError);
    expect(() => registry.register(route('B.refund'))).toThrow(
      /A\.refund and B\.refund .*would replay the responses/,
    );
    expect(() => registry.register(route('C.refund', { target: 'body.id' }))).toThrow(
      /A\.refund and C\.refund .*different key shapes/,
    );
    expect(registry.list().map((claim) => claim.route)).toEqual(['A.refund']);
  });

  it('lets routes share one operation only when both say shared: true', () => {
    const registry = new OperationRegistry();
    registry.register(route('A.refund', { shared: true }));
    registry.register(route('B.refund', { shared: true }));
    expect(() => registry.register(route('C.refund'))).toThrow(/A\.refund and C\.refund/);
    const unmarkedFirst = new OperationRegistry();
    unmarkedFirst.register(route('A.refund'));
    expect(() => unmarkedFirst.register(route('B.refund', { shared: true }))).toThrow(
      OperationClaimConflictError,
    );
  });

  it('accepts different shapes when both are shared, or for another version', () => {
    const registry = new OperationRegistry();
    registry.register(route('A.refund', { shared: true }));
    registry.register(route('B.refund', { shared: true, target: 'body.id' }));
    expect(() => registry.register(route('C.refund', { target: 'body.x' }))).toThrow(
      OperationClaimConflictError,
    );
    registry.register(route('D.refund', { version: 'v2', target: 'body.x' }));
  });
});
