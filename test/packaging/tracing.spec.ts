import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/tracing.mjs', import.meta.url));
const jestFixture = fileURLToPath(
  new URL('./fixtures/engine-under-jest.test.cjs', import.meta.url),
);

interface TracingReport {
  readonly apiInstalled: boolean;
  readonly replayed: Record<'cjs' | 'esm', boolean[] | string>;
  readonly spans: { name: string; decision?: string; parent?: string }[];
}

async function report(script: string, ...args: string[]): Promise<TracingReport> {
  const { stdout } = await promisify(execFile)(process.execPath, [script, ...args], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(stdout) as TracingReport;
}

/**
 * `@opentelemetry/api` is an optional peer of `@oncely/core`, loaded with `import()` in the ESM
 * build and `require` in the CommonJS one: both builds must find it when it is installed and
 * run as usual when it is not.
 */
describe('tracing in the built packages', () => {
  it('traces each call of both builds, with the handler span as its child', async () => {
    const { apiInstalled, replayed, spans } = await report(fixture, 'with-sdk');
    expect(apiInstalled).toBe(true);
    expect(replayed).toEqual({ cjs: [false, true], esm: [false, true] });
    expect(spans).toEqual([
      { name: 'cjs handler', parent: 'oncely pack-cjs:job:v1' },
      { name: 'oncely pack-cjs:job:v1', decision: 'executed' },
      { name: 'oncely pack-cjs:job:v1', decision: 'replayed' },
      { name: 'esm handler', parent: 'oncely pack-esm:job:v1' },
      { name: 'oncely pack-esm:job:v1', decision: 'executed' },
      { name: 'oncely pack-esm:job:v1', decision: 'replayed' },
    ]);
  });

  describe('in an app outside the repository', () => {
    let app: string;

    /** `@oncely/core` built, with its dependencies, where nothing resolves to the workspace. */
    beforeAll(async () => {
      app = await mkdtemp(join(tmpdir(), 'oncely-otel-'));
      const core = join(app, 'node_modules/@oncely/core');
      await mkdir(core, { recursive: true });
      await cp(join(root, 'packages/core/package.json'), join(core, 'package.json'));
      await cp(join(root, 'packages/core/dist'), join(core, 'dist'), { recursive: true });
      const manifest = JSON.parse(await readFile(join(core, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      for (const dependency of Object.keys(manifest.dependencies)) {
        const nested = join(root, 'packages/core/node_modules', dependency);
        const installed = existsSync(nested) ? nested : join(root, 'node_modules', dependency);
        await symlink(installed, join(app, 'node_modules', dependency));
      }
      await cp(fixture, join(app, 'tracing.mjs'));
    });

    afterAll(() => rm(app, { recursive: true, force: true }));

    it('starts and runs calls on both builds without @opentelemetry/api, tracing nothing', async () => {
      const { apiInstalled, replayed, spans } = await report(join(app, 'tracing.mjs'));
      expect(apiInstalled).toBe(false);
      expect(replayed).toEqual({ cjs: [false, true], esm: [false, true] });
      expect(spans).toEqual([]);
    });

    it("starts under the app's own Jest (CommonJS) without @opentelemetry/api", async () => {
      await cp(jestFixture, join(app, 'engine-under-jest.test.cjs'));
      const jest = join(root, 'node_modules/jest/bin/jest.js');
      const config = JSON.stringify({ rootDir: app, testMatch: ['**/*.test.cjs'], transform: {} });
      const { stderr } = await promisify(execFile)(
        process.execPath,
        [jest, '--ci', '--config', config],
        { cwd: app, env: { ...process.env, NODE_OPTIONS: '' } },
      );
      expect(stderr).toMatch(/Tests:\s+1 passed, 1 total/);
    });

    it('refuses to start on an @opentelemetry/api that is installed but not the API', async () => {
      const api = join(app, 'node_modules/@opentelemetry/api');
      await mkdir(api, { recursive: true });
      await writeFile(
        join(api, 'package.json'),
        JSON.stringify({ name: '@opentelemetry/api', version: '0.0.1', main: 'index.js' }),
      );
      await writeFile(join(api, 'index.js'), 'module.exports = { trace: {} };\n');
      try {
        const { apiInstalled, replayed } = await report(join(app, 'tracing.mjs'));
        expect(apiInstalled).toBe(true);
        expect(replayed).toEqual({
          cjs: 'OpenTelemetryLoadError: opentelemetry_load',
          esm: 'OpenTelemetryLoadError: opentelemetry_load',
        });
      } finally {
        await rm(join(app, 'node_modules/@opentelemetry'), { recursive: true, force: true });
      }
    });
  });
});
