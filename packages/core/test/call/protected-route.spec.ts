import {
  IdempotencyKeyMalformedError,
  IdempotencyKeyMissingError,
  MissingKeyFieldError,
  OperationClaimConflictError,
  PreviousVersionClaimedError,
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

  it('resolves previousVersions, none by default', () => {
    expect(idempotent().idempotent?.previousVersions).toEqual([]);
    expect(
      idempotent({ version: 'v3', previousVersions: ['v2', 'v1'] }).idempotent?.previousVersions,
    ).toEqual(['v2', 'v1']);
  });

  it.each([
    [{ previousVersions: 'v1', version: 'v2' }, 'must be an array of versions', 'got "v1"'],
    [{ previousVersions: [7], version: 'v2' }, '7 is not a version', '[A-Za-z0-9._~-]'],
    [{ previousVersions: [''], version: 'v2' }, '"" is not a version', 'previousVersions'],
    [{ previousVersions: ['v 1'], version: 'v2' }, '"v 1" is not a version', 'previousVersions'],
    [
      { previousVersions: ['v1'] },
      `"v1" is the route's current version`,
      'Declare the bumped version',
    ],
    [{ previousVersions: ['v1', 'v1'], version: 'v2' }, '"v1" is listed twice', 'once'],
    [
      { previousVersions: ['v1', 'v2', 'v3', 'v4', 'v5'], version: 'v6' },
      'lists 5 versions, at most 4',
      'retention has passed',
    ],
  ])('refuses previousVersions %p, naming the bad value', (options, problem, fix) => {
    const define = () => idempotent(options as never);
    expect(define).toThrow(RouteOptionsError);
    expect(define).toThrow(/Invalid oncely option "previousVersions" on PayController\.pay/);
    expect(define).toThrow(problem);
    expect(define).toThrow(fix);
  });

  it('refuses previousVersions on a SingleFlight route', () => {
    const singleFlight = () =>
      defineProtectedRoute(
        'ReportController.get',
        { singleFlight: { operation: 'report', previousVersions: ['v1'] } as never },
        defaults,
      );
    expect(singleFlight).toThrow(/"previousVersions" on ReportController\.get: unknown option/);
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

  it("gives the identities the route's previous versions built for the same request", () => {
    const v1 = idempotent();
    const v3 = idempotent({ version: 'v3', previousVersions: ['v2', 'v1'] });
    const v2 = idempotent({ version: 'v2' });
    const headers = { 'idempotency-key': 'k-1' };

    const keys = resolveCallKeys(v3, ctx(headers));

    expect(keys.idempotency?.identity).toBe('shop:pay:v3:t-1:k-1');
    expect(keys.previousIdentities).toEqual([
      resolveCallKeys(v2, ctx(headers)).idempotency?.identity,
      resolveCallKeys(v1, ctx(headers)).idempotency?.identity,
    ]);
    expect(resolveCallKeys(v1, ctx(headers)).previousIdentities).toBeUndefined();
  });

  it('bounds each previous identity as its own version did, when only one of them is hashed', () => {
    // 7 target values of 64 characters: within the bound under 'v1', past it under a long name.
    const target = Array.from({ length: 7 }, (_, i) => `body.t${i}`);
    const body = Object.fromEntries(target.map((path, i) => [path.slice(5), `${i}`.repeat(64)]));
    const long = 'v2-with-a-much-longer-name';
    const route = (version: string, previousVersions?: string[]) =>
      idempotent({ version, previousVersions, target, idempotencyKey: 'ignored' });
    const request = { body, headers: {}, user: { tenantId: 't-1' } };
    const identityOf = (version: string) =>
      resolveCallKeys(route(version), request).idempotency?.identity ?? '';

    expect(identityOf('v1')).toContain('000000');
    expect(identityOf(long)).toMatch(/:%_[0-9a-f]{32}$/);
    expect(resolveCallKeys(route(long, ['v1']), request).previousIdentities).toEqual([
      identityOf('v1'),
    ]);
    expect(resolveCallKeys(route('v1', [long]), request).previousIdentities).toEqual([
      identityOf(long),
    ]);
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

  it("lists a route's previous versions in its claim", () => {
    const registry = new OperationRegistry();
    registry.register(route('A.refund', { version: 'v3', previousVersions: ['v2', 'v1'] }));
    expect(registry.list()).toEqual([
      expect.objectContaining({
        mechanism: 'idempotency',
        operation: 'shop:refund:v3',
        route: 'A.refund',
        previousVersions: ['shop:refund:v2', 'shop:refund:v1'],
      }),
    ]);
  });

  it("refuses a previous version that is another route's current one, in either order", () => {
    const listedFirst = new OperationRegistry();
    listedFirst.register(route('New.refund', { version: 'v2', previousVersions: ['v1'] }));
    expect(() => listedFirst.register(route('Old.refund'))).toThrow(PreviousVersionClaimedError);
    expect(() => listedFirst.register(route('Old.refund'))).toThrow(
      /^New\.refund lists the version of "shop:refund:v1" in previousVersions, but Old\.refund still claims it: .*run twice\. Move Old\.refund to the new version/,
    );
    const claimedFirst = new OperationRegistry();
    claimedFirst.register(route('Old.refund'));
    expect(() =>
      claimedFirst.register(route('New.refund', { version: 'v2', previousVersions: ['v1'] })),
    ).toThrow(
      /^New\.refund lists the version of "shop:refund:v1" .* but Old\.refund still claims it/,
    );
    expect(claimedFirst.list().map((claim) => claim.route)).toEqual(['Old.refund']);
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
