import {
  OncelyConfigurationError,
  createOncelyEngine,
  type OncelyEngine,
  type OncelyEngineOptions,
} from '@oncely/core';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceNameOf } from '../../src/engine/service-name.js';

/** The `service` option: who owns the app's claims. */
describe('the service option', () => {
  const created: OncelyEngine[] = [];
  const engine = (options: Partial<OncelyEngineOptions>) => {
    const built = createOncelyEngine({ namespace: 'shop', owner: 'OncelyModule', ...options });
    created.push(built);
    return built;
  };
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oncely-service-'));
  });

  afterEach(async () => {
    await Promise.all(created.splice(0).map((built) => built.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('takes a plain or an npm-scoped name as given, and stamps it on every claim', () => {
    expect(engine({ service: 'shop-api' }).service).toBe('shop-api');
    const built = engine({ service: '@acme/shop-api' });
    built.defineRoute('POST /orders', {
      idempotent: { operation: 'order-create', scope: 'user.tenantId' },
      singleFlight: { operation: 'order-quote' },
    });

    expect(built.claims().map((claim) => claim.owner)).toEqual([
      '@acme/shop-api',
      '@acme/shop-api',
    ]);
  });

  it.each([
    ['', '""'],
    ['shop api', '"shop api"'],
    ['shop:api', '"shop:api"'],
    ['@acme/', '"@acme/"'],
    ['a/b', '"a/b"'],
    ['x'.repeat(129), `"${'x'.repeat(129)}"`],
    [42, '42'],
  ])('refuses %j, naming the option and the entry point', (service, shown) => {
    let message = '';
    try {
      engine({ service: service as string });
    } catch (error) {
      expect(error).toBeInstanceOf(OncelyConfigurationError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/^OncelyModule option "service" must name the service/);
    expect(message).toContain(`got ${shown}.`);
  });

  it('takes serviceAliases, the other names the service accepts as its own while it is renamed', () => {
    expect(engine({ service: 'shop-api' }).serviceAliases).toEqual([]);
    const built = engine({ service: 'shop-api', serviceAliases: ['shop', '@acme/shop'] });

    expect(built.serviceAliases).toEqual(['shop', '@acme/shop']);
    built.defineRoute('POST /orders', {
      idempotent: { operation: 'order-create', scope: 'user.tenantId' },
    });
    // Claims are stamped with the service alone: the aliases are what it accepts, not what it is.
    expect(built.claims().map((claim) => claim.owner)).toEqual(['shop-api']);
  });

  it.each([
    ['shop', 'must be an array of service names', 'got "shop"'],
    [[42], 'has 42 at index 0, which is not a service name', ''],
    [['shop', 'shop api'], 'has "shop api" at index 1, which is not a service name', ''],
    [['shop', 'shop'], 'lists "shop" twice', ''],
    [['shop-api'], 'lists "shop-api", the service’s own name', ''],
  ])(
    'refuses serviceAliases %j, naming the option, the bad value and the fix',
    (aliases, says, got) => {
      let message = '';
      try {
        engine({ service: 'shop-api', serviceAliases: aliases as string[] });
      } catch (error) {
        expect(error).toBeInstanceOf(OncelyConfigurationError);
        message = (error as Error).message;
      }
      expect(message).toMatch(/^OncelyModule option "serviceAliases" /);
      expect(message).toContain(says);
      expect(message).toContain(got);
    },
  );

  it('defaults to the name of the nearest package.json above the working directory', async () => {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: '@acme/orders' }));
    // A nameless package.json (a build's {"type": "commonjs"}) is passed over.
    await mkdir(join(dir, 'dist', 'cjs'), { recursive: true });
    await writeFile(join(dir, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }');

    expect(serviceNameOf('OncelyModule', undefined, 'shop', join(dir, 'dist', 'cjs'))).toBe(
      '@acme/orders',
    );
  });

  it('defaults to the namespace without a usable package name', async () => {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'Not A Name' }));
    expect(serviceNameOf('OncelyModule', undefined, 'shop', dir)).toBe('shop');
    await writeFile(join(dir, 'package.json'), '{ not json');
    expect(serviceNameOf('OncelyModule', undefined, 'shop', dir)).toBe('shop');
  });

  it('defaults, in an engine, to the package name of the directory the process runs in', () => {
    // Jest runs in the repository root, whose package.json is named oncely-monorepo.
    expect(engine({}).service).toBe('oncely-monorepo');
  });
});
