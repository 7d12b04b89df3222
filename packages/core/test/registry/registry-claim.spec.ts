import { RouteOptionsError, createOncelyEngine, type OncelyEngine } from '@oncely/core';
import { DeclaredRoutes, checkRouteOptions } from '@oncely/core/adapter';

/** What a route claims, as the service's registry file lists it. */
describe('registry claims', () => {
  const created: OncelyEngine[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((built) => built.close()));
  });

  it('lists every mechanism of a route with its key fields, lifetimes and description', () => {
    const routes = DeclaredRoutes.create({
      namespace: 'shop',
      service: 'shop-api',
      defaults: { leaseTtl: 7_000, fingerprintBits: 96 },
    });
    function tenantOf(ctx: { user?: unknown }): unknown {
      return (ctx.user as { tenantId?: string } | undefined)?.tenantId;
    }
    routes.define('OrdersController.create (POST /orders)', {
      idempotent: {
        operation: 'order-create',
        version: 'v2',
        description: '  Creates an order from a cart  ',
        scope: [tenantOf, { path: 'query.region', optional: true, default: 'eu' }],
        target: [{ path: 'body.cartId' }, (ctx) => (ctx.params as { id?: string }).id],
        input: ['body.items', 'body.note', 'body.code'],
        normalize: { 'body.note': 'exact', 'body.code': (value: string) => value.toUpperCase() },
        unordered: ['body.items'],
        retention: 3_600_000,
      },
      singleFlight: { operation: 'order-quote', resultTtl: 0, shared: true },
    });

    expect(routes.claims()).toEqual([
      {
        operation: 'order-create',
        version: 'v2',
        namespace: 'shop',
        mechanism: 'idempotency',
        owner: 'shop-api',
        route: 'OrdersController.create (POST /orders)',
        description: 'Creates an order from a cart',
        scope: ['function tenantOf', 'query.region (optional, default "eu")'],
        target: ['body.cartId', 'function (anonymous)'],
        input: ['body.items', 'body.note', 'body.code'],
        clientKey: 'required',
        shared: false,
        fingerprintBits: 96,
        normalize: { 'body.note': 'exact', 'body.code': 'function body.code' },
        unordered: ['body.items'],
        ttl: { lease: 7_000, retention: 3_600_000, replayCache: 60_000 },
        maxDuration: 300_000,
      },
      {
        operation: 'order-quote',
        version: 'v1',
        namespace: 'shop',
        mechanism: 'single-flight',
        owner: 'shop-api',
        route: 'OrdersController.create (POST /orders)',
        scope: [],
        target: [],
        input: ['body'],
        shared: true,
        fingerprintBits: 96,
        ttl: { lease: 7_000, result: 0, error: 3_000 },
        maxDuration: 300_000,
      },
    ]);
  });

  it('are what the engine lists for the routes it defined', () => {
    const engine = createOncelyEngine({ namespace: 'shop', service: 'shop-api' });
    created.push(engine);
    engine.defineRoute('POST /pay', {
      idempotent: { operation: 'pay', scope: 'user.id', idempotencyKey: 'optional' },
    });

    expect(engine.claims()).toEqual([
      expect.objectContaining({ operation: 'pay', clientKey: 'optional', route: 'POST /pay' }),
    ]);
  });

  it('refuse a description that is not one line of text, when the decorator is applied', () => {
    for (const description of ['', '   ', 'two\nlines', 'x'.repeat(301), 7]) {
      expect(() =>
        checkRouteOptions('OrdersController.create', 'idempotent', {
          operation: 'order-create',
          scope: 'user.id',
          description: description as string,
        }),
      ).toThrow(
        new RouteOptionsError(
          'OrdersController.create',
          'description',
          `must be one line of text of at most 300 characters, got ${typeof description === 'string' ? JSON.stringify(description) : '7'}`,
        ),
      );
    }
  });
});
