import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['core', 'redis', 'typeorm', 'nestjs', 'express', 'cli'] as const;
type PackageName = (typeof PACKAGES)[number];

const run = promisify(execFile);
// `--explainFiles` lists every declaration file a consumer loads: more than execFile's 1 MiB.
const node = (args: string[], cwd: string) =>
  run(process.execPath, args, {
    cwd,
    env: { ...process.env, NODE_OPTIONS: '' },
    maxBuffer: 64 * 1024 * 1024,
  });

/** Every string target of an `exports` map, conditions and subpaths flattened. */
function exportTargets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  return Object.values(exports as Record<string, unknown>).flatMap(exportTargets);
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

/**
 * Links a package's own dependencies (not the peers: those resolve from the repository's
 * node_modules, above) into `nodeModules`, from where npm installed them for the workspace.
 */
async function linkDependencies(name: PackageName, nodeModules: string): Promise<void> {
  const manifest = JSON.parse(
    await readFile(join(root, 'packages', name, 'package.json'), 'utf8'),
  ) as { dependencies?: Record<string, string> };
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    const link = join(nodeModules, dependency);
    if (dependency.startsWith('@oncely/') || existsSync(link)) continue;
    const nested = join(root, 'packages', name, 'node_modules', dependency);
    await mkdir(join(link, '..'), { recursive: true });
    await symlink(existsSync(nested) ? nested : join(root, 'node_modules', dependency), link);
  }
}

/**
 * The tarballs `npm pack` makes of each package (after `npm run build`, done by this project's
 * global setup), unpacked into a node_modules of their own, with their dependencies linked from
 * the workspace's. That directory lies inside the repository's node_modules, so peers resolve to
 * the installed ones and nothing is fetched, while `@oncely/*` resolves to the tarballs.
 */
describe('the packed packages', () => {
  let work: string;
  const contents = new Map<PackageName, string[]>();

  beforeAll(async () => {
    await mkdir(join(root, 'node_modules/.cache'), { recursive: true });
    work = await mkdtemp(join(root, 'node_modules/.cache/oncely-packed-'));
    await Promise.all(
      PACKAGES.map(async (name) => {
        const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', work], {
          cwd: join(root, 'packages', name),
        });
        const tarball = join(work, stdout.trim().split('\n').at(-1)!);
        const listing = await run('tar', ['-tzf', tarball]);
        contents.set(
          name,
          listing.stdout
            .trim()
            .split('\n')
            .map((entry) => entry.replace(/^package\//, '')),
        );
        const target = join(work, 'node_modules/@oncely', name);
        await mkdir(target, { recursive: true });
        await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
      }),
    );
    for (const name of PACKAGES) await linkDependencies(name, join(work, 'node_modules'));
  });

  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it.each(PACKAGES)('@oncely/%s holds its license, readme and both builds', async (name) => {
    const files = contents.get(name)!;
    const manifest = JSON.parse(
      await readFile(join(work, 'node_modules/@oncely', name, 'package.json'), 'utf8'),
    ) as { exports: unknown };
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'CHANGELOG.md',
        'package.json',
        'dist/cjs/package.json',
        ...exportTargets(manifest.exports).map((target) => target.replace(/^\.\//, '')),
      ]),
    );
    expect(files.some((file) => file.startsWith('dist/esm/'))).toBe(true);
    expect(await readFile(join(work, 'node_modules/@oncely', name, 'LICENSE'), 'utf8')).toBe(
      await readFile(join(root, 'LICENSE'), 'utf8'),
    );
  });

  it.each(PACKAGES)('@oncely/%s has a changelog headed by its version', async (name) => {
    const packed = join(work, 'node_modules/@oncely', name);
    const manifest = JSON.parse(await readFile(join(packed, 'package.json'), 'utf8')) as {
      version: string;
    };
    const changelog = await readFile(join(packed, 'CHANGELOG.md'), 'utf8');
    expect(changelog.split('\n', 1)[0]).toBe(`# @oncely/${name}`);
    expect(/^## (\S+)$/m.exec(changelog)?.[1]).toBe(manifest.version);
  });

  it.each(PACKAGES)('@oncely/%s holds no tests, benchmarks or build caches', (name) => {
    const stray = contents
      .get(name)!
      .filter((file) => /^(test|bench)\/|\.spec\.ts$|\.tsbuildinfo$/.test(file));
    expect(stray).toEqual([]);
  });

  it('@oncely/redis holds every Lua script where both builds read them', async () => {
    const scripts = await filesUnder(join(root, 'packages/redis/lua'));
    expect(scripts).toContain('lua-directory.cjs');
    expect(contents.get('redis')).toEqual(
      expect.arrayContaining(scripts.map((file) => `dist/lua/${file}`)),
    );
  });

  it('every entry point loads with require() and import(), with the same exports', async () => {
    const entries = [
      '@oncely/core',
      '@oncely/core/adapter',
      '@oncely/core/testing',
      '@oncely/redis',
      '@oncely/typeorm',
      '@oncely/nestjs',
      '@oncely/express',
      '@oncely/cli',
    ];
    await writeFile(
      join(work, 'load-entries.mjs'),
      `import { createRequire } from 'node:module';
       const require = createRequire(import.meta.url);
       const names = (m) => Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule').sort();
       const loaded = {};
       for (const entry of ${JSON.stringify(entries)}) {
         loaded[entry] = {
           cjs: { file: require.resolve(entry), names: names(require(entry)) },
           esm: { file: import.meta.resolve(entry), names: names(await import(entry)) },
         };
       }
       console.log(JSON.stringify(loaded));`,
    );
    const { stdout } = await node(['load-entries.mjs'], work);
    const loaded = JSON.parse(stdout) as Record<
      string,
      Record<'cjs' | 'esm', { file: string; names: string[] }>
    >;
    for (const entry of entries) {
      const { cjs, esm } = loaded[entry]!;
      const packed = join(work, 'node_modules', entry.split('/', 2).join('/'));
      expect(cjs.file.startsWith(join(packed, 'dist/cjs/'))).toBe(true);
      expect(esm.file.startsWith(pathToFileURL(join(packed, 'dist/esm/')).href)).toBe(true);
      expect(cjs.names.length).toBeGreaterThan(0);
      expect(cjs.names).toEqual(esm.names);
    }
  });

  it("runs the oncely bin, and reads an app's claims through either build", async () => {
    const app = `const oncely = createOncely({ namespace: 'shop', service: 'shop-api' });
      oncely.idempotent({ name: 'POST /orders', operation: 'order-create', scope: 'user.tenantId' });`;
    await writeFile(
      join(work, 'express-app.mjs'),
      `import { createOncely } from '@oncely/express';\n${app}\nexport { oncely };\n`,
    );
    await writeFile(
      join(work, 'express-app.cjs'),
      `const { createOncely } = require('@oncely/express');\n${app}\nmodule.exports = { oncely };\n`,
    );
    const bin = join(work, 'node_modules/@oncely/cli/dist/esm/bin/oncely.js');
    const manifest = JSON.parse(
      await readFile(join(work, 'node_modules/@oncely/cli/package.json'), 'utf8'),
    ) as { bin: Record<string, string> };
    expect(join(work, 'node_modules/@oncely/cli', manifest.bin.oncely!)).toBe(bin);

    const exported = await node([bin, 'registry', 'export', 'express-app.mjs'], work);
    expect(exported.stdout).toBe('Wrote the 1 claim of shop-api to oncely.registry.yaml.\n');
    const checked = await node([bin, 'registry', 'check', 'express-app.cjs'], work);
    expect(checked.stdout).toBe('oncely.registry.yaml lists the 1 claim of shop-api.\n');
    const required = await node(
      [
        '-e',
        `require('@oncely/cli').loadAppClaims(require('node:path').resolve('express-app.mjs'))
          .then((app) => console.log(JSON.stringify(app.claims.map((claim) => claim.route))));`,
      ],
      work,
    );
    expect(JSON.parse(required.stdout)).toEqual(['POST /orders']);
  });

  it('gives TypeScript nodenext consumers the CommonJS types in .cts, the ESM ones in .mts', async () => {
    const consumer = `import { createOncelyEngine } from '@oncely/core';
      import { ProtectedCallExecutor } from '@oncely/core/adapter';
      import { RedisFlightCoordinator } from '@oncely/redis';
      import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
      import { OncelyModule } from '@oncely/nestjs';
      import { createOncely } from '@oncely/express';
      import { runCli } from '@oncely/cli';
      export const used = [
        createOncelyEngine, ProtectedCallExecutor, RedisFlightCoordinator,
        TypeOrmIdempotencyRecordStore, OncelyModule, createOncely, runCli,
      ];
      `;
    await writeFile(join(work, 'consumer.cts'), consumer);
    await writeFile(join(work, 'consumer.mts'), consumer);
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    // `skipLibCheck`: resolution and the consumers' use of the declarations are what is checked
    // here (the build type-checked the packages); checking every peer's types would take 20 s.
    const { stdout } = await node(
      [
        tsc,
        ...['--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext'],
        ...['--types', 'node', '--explainFiles', 'consumer.cts', 'consumer.mts'],
      ],
      work,
    );
    for (const [consumer, build] of [
      ['consumer.cts', 'cjs'],
      ['consumer.mts', 'esm'],
    ]) {
      for (const name of PACKAGES) {
        expect(stdout).toContain(
          `Imported via '@oncely/${name}' from file '${consumer}' with packageId '@oncely/${name}/dist/${build}/index.d.ts@`,
        );
      }
    }
  });
});
