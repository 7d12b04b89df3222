/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

/**
 * One Jest project per package, and `packaging` for the published tarballs. Everything runs as
 * native ESM (the Nest 12 packages are ESM-only), compiled by SWC with legacy decorators and
 * decorator metadata, as `tsc` would.
 */
const swcTransform: Config['transform'] = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: {
          legacyDecorator: true,
          decoratorMetadata: true,
          useDefineForClassFields: false,
        },
        target: 'es2022',
        keepClassNames: true,
      },
      module: { type: 'es6' },
      sourceMaps: 'inline',
    },
  ],
};

const workspaceAliases: Record<string, string> = {
  '^@oncely/core$': '<rootDir>/packages/core/src/index.ts',
  '^@oncely/core/adapter$': '<rootDir>/packages/core/src/adapter.ts',
  '^@oncely/core/testing$': '<rootDir>/packages/core/src/testing/index.ts',
  '^@oncely/redis$': '<rootDir>/packages/redis/src/index.ts',
  '^@oncely/typeorm$': '<rootDir>/packages/typeorm/src/index.ts',
  '^@oncely/nestjs$': '<rootDir>/packages/nestjs/src/index.ts',
  '^@oncely/express$': '<rootDir>/packages/express/src/index.ts',
  '^@oncely/cli$': '<rootDir>/packages/cli/src/index.ts',
  '^@oncely/testing-kit$': '<rootDir>/libs/testing/src/index.ts',
  '^(\\.{1,2}/.*)\\.js$': '$1',
};

function project(displayName: string, root: string, extra: Config = {}): Config {
  return {
    ...extra,
    displayName,
    rootDir: '.',
    roots: [`<rootDir>/${root}`],
    testMatch: ['**/*.spec.ts'],
    testEnvironment: 'node',
    extensionsToTreatAsEsm: ['.ts'],
    transform: swcTransform,
    moduleNameMapper: workspaceAliases,
  };
}

const config: Config = {
  // Suites talk to real Redis and databases and start child processes and servers.
  testTimeout: 60_000,
  // Native ESM keeps every suite's module graph alive in the process that ran it: on two cores
  // Jest would run all suites in its own process (one worker) until the heap runs out. A limit
  // makes it use a worker, replaced whenever a suite leaves it above the limit.
  workerIdleMemoryLimit: '1GB',
  projects: [
    project('core', 'packages/core'),
    project('redis', 'packages/redis'),
    project('typeorm', 'packages/typeorm'),
    project('nestjs', 'packages/nestjs'),
    project('express', 'packages/express'),
    project('cli', 'packages/cli'),
    project('testing-kit', 'libs/testing'),
    project('demo', 'apps/demo'),
    // Packs and loads the built packages; its global setup runs `npm run build` (incremental).
    project('packaging', 'test/packaging', {
      globalSetup: '<rootDir>/test/packaging/global-setup.mjs',
    }),
  ],
};

export default config;
