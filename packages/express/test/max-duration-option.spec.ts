import { RouteOptionsError } from '@oncely/core';
import { createOncely, OncelyConfigurationError, type Oncely } from '@oncely/express';
import { uniqueNamespace } from './fixtures/backends.js';

describe('maxDuration on createOncely() and its middlewares', () => {
  const created: Oncely[] = [];
  const oncely = (defaults: Record<string, unknown> = {}) => {
    const instance = createOncely({ namespace: uniqueNamespace(), defaults });
    created.push(instance);
    return instance;
  };

  afterAll(async () => {
    await Promise.all(created.map((instance) => instance.close()));
  });

  it('refuses a bad default, naming it', () => {
    expect(() => oncely({ maxDuration: 0 })).toThrow(OncelyConfigurationError);
    expect(() => oncely({ maxDuration: 2 ** 31 })).toThrow(/defaults\.maxDuration/);
    expect(oncely({ maxDuration: 60_000 }).defaults.maxDuration).toBe(60_000);
  });

  it('refuses a bad route value when the middleware is created, naming the route and option', () => {
    const instance = oncely();
    expect(() =>
      instance.idempotent({
        name: 'POST /pay',
        operation: 'pay',
        scope: 'user.id',
        maxDuration: -1,
      }),
    ).toThrow(/"maxDuration" on POST \/pay/);
    expect(() =>
      instance.singleFlight({ name: 'GET /r', operation: 'r', maxDuration: '5s' as never }),
    ).toThrow(RouteOptionsError);
    expect(() =>
      instance.singleFlight({ name: 'GET /ok', operation: 'ok', maxDuration: 1_000 }),
    ).not.toThrow();
  });
});
