import { randomBytes } from 'node:crypto';
import {
  OperationClaimConflictError,
  RouteOptionsError,
  TransactionalStoreRequiredError,
  createOncelyEngine,
  type OncelyEngine,
  type OncelyEngineOptions,
} from '@oncely/core';
import { services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { DataSource } from 'typeorm';

/** `defineRoute`: the one place a route is resolved, checked against the store and registered. */
describe('OncelyEngine.defineRoute', () => {
  const created: OncelyEngine[] = [];
  const engine = (options: Partial<OncelyEngineOptions> = {}) => {
    const built = createOncelyEngine({ namespace: 'shop', ...options });
    created.push(built);
    return built;
  };
  /** A real TypeORM store; defining routes needs no connection, so none is opened. */
  const transactionalStore = () =>
    new TypeOrmIdempotencyRecordStore(
      new DataSource(withIdempotencyRecords({ type: 'postgres', ...services.postgres })),
    );

  afterEach(async () => {
    await Promise.all(created.splice(0).map((built) => built.close()));
  });

  it('resolves the route against the defaults and registers its claims', () => {
    const built = engine({ defaults: { leaseTtl: 7_000 } });
    const route = built.defineRoute('POST /orders', {
      idempotent: { operation: 'order-create', scope: 'user.tenantId' },
      singleFlight: { operation: 'order-create', input: 'body.cart' },
    });

    expect(route.name).toBe('POST /orders');
    expect(route.idempotent).toMatchObject({ operation: 'shop:order-create:v1', leaseTtl: 7_000 });
    expect(built.registry.list().map(({ mechanism, route: name }) => [mechanism, name])).toEqual([
      ['idempotency', 'POST /orders'],
      ['single-flight', 'POST /orders'],
    ]);
  });

  it('refuses a second route on one operation, naming both, and a bad option, naming the route', () => {
    const built = engine();
    built.defineRoute('POST /a', { idempotent: { operation: 'pay', scope: 'user.id' } });

    expect(() =>
      built.defineRoute('POST /b', { idempotent: { operation: 'pay', scope: 'user.id' } }),
    ).toThrow(OperationClaimConflictError);
    expect(() =>
      built.defineRoute('POST /c', { singleFlight: { operation: 'c', resultTtl: -1 } }),
    ).toThrow(RouteOptionsError);
    expect(() =>
      built.defineRoute('POST /c', { singleFlight: { operation: 'c', resultTtl: -1 } }),
    ).toThrow(/POST \/c/);
  });

  it('refuses a transactional route on a store without transactions, registering nothing', () => {
    const built = engine();
    expect(built.supportsTransactions).toBe(false);

    expect(() =>
      built.defineRoute('POST /transfers', {
        idempotent: { operation: 'transfer', scope: 'user.id', transactional: true },
      }),
    ).toThrow(new TransactionalStoreRequiredError('POST /transfers'));
    expect(built.registry.list()).toHaveLength(0);
  });

  it('accepts a transactional route on a transactional store, encrypted or not', () => {
    for (const options of [{}, { encryption: { keys: [{ id: 'k1', secret: randomBytes(32) }] } }]) {
      const built = engine({ ...options, store: transactionalStore() });
      expect(built.supportsTransactions).toBe(true);
      const route = built.defineRoute('POST /transfers', {
        idempotent: { operation: 'transfer', scope: 'user.id', transactional: true },
      });
      expect(route.idempotent?.transactional).toBe(true);
      expect(built.registry.list()).toHaveLength(1);
    }
  });
});
