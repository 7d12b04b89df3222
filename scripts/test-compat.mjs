#!/usr/bin/env node
// The compatibility matrix (compat/README.md): packs every @oncely/* package as `npm pack` makes
// it for the registry, installs the tarballs into each consumer app under compat/ from the app's
// own lockfile, and runs the app's own tests with its own runner.
//
//   node scripts/test-compat.mjs [--update] [app...]
//
// --update re-resolves each app's lockfile (`npm install`) instead of `npm ci`: for a changed
// app manifest or a new dependency of an @oncely package.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const compat = join(root, 'compat');
const packed = join(compat, 'packed');
const PACKAGES = ['core', 'redis', 'typeorm', 'nestjs', 'express'];
/** What the closing summary lists of each app's installed tree, where the app has it. */
const REPORTED = [
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
  '@nestjs/typeorm',
  '@nestjs/config',
  'express',
  'fastify',
  'ioredis',
  'typeorm',
  'pg',
  'typescript',
  'jest',
  'ts-jest',
];
// Two apps at a time: each runs a server and a test runner, and the machine has two cores.
const PARALLEL = Number(process.env.COMPAT_PARALLEL ?? 2);

const args = process.argv.slice(2);
const update = args.includes('--update');
const only = args.filter((arg) => !arg.startsWith('--'));

function run(command, commandArgs, cwd, log) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      cwd,
      // The monorepo's own test command sets ESM flags; a consumer app must run without them.
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      log.push(`$ ${command} ${commandArgs.join(' ')}\n${output}`);
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${commandArgs.join(' ')} exited with ${code}`));
    });
  });
}

/** Packs each package to compat/packed/oncely-<name>.tgz: a name the app manifests can pin. */
async function packPackages() {
  await rm(packed, { recursive: true, force: true });
  await mkdir(packed, { recursive: true });
  const log = [];
  await run('npm', ['run', 'build', '--silent'], root, log);
  for (const name of PACKAGES) {
    const stdout = await run(
      'npm',
      ['pack', '--silent', '--pack-destination', packed],
      join(root, 'packages', name),
      log,
    );
    const tarball = stdout.trim().split('\n').at(-1);
    await rename(join(packed, tarball), join(packed, `oncely-${name}.tgz`));
  }
}

/**
 * npm records an integrity hash for a `file:` tarball and, on `npm ci`, installs whatever its
 * cache holds under that hash: the tarball of an earlier build. Without the hash it unpacks the
 * file as it is now, and `npm install` does not add one back.
 */
async function dropTarballIntegrity(app) {
  const lockfile = join(compat, app, 'package-lock.json');
  const lock = JSON.parse(await readFile(lockfile, 'utf8'));
  let changed = false;
  for (const entry of Object.values(lock.packages ?? {})) {
    if (entry.resolved?.startsWith('file:') && entry.integrity) {
      delete entry.integrity;
      changed = true;
    }
  }
  if (changed) await writeFile(lockfile, `${JSON.stringify(lock, null, 2)}\n`);
  return changed;
}

/**
 * npm trusts what the lockfile says a `file:` tarball depends on, so a dependency added to an
 * @oncely package would never reach the app's lockfile: `--update` drops those entries first and
 * lets `npm install` read the tarballs again.
 */
async function forgetTarballs(app) {
  const lockfile = join(compat, app, 'package-lock.json');
  const lock = JSON.parse(await readFile(lockfile, 'utf8'));
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (entry.resolved?.startsWith('file:')) delete lock.packages[path];
  }
  await writeFile(lockfile, `${JSON.stringify(lock, null, 2)}\n`);
}

async function installedVersions(app, log) {
  const versions = {};
  for (const name of REPORTED) {
    const manifest = join(compat, app, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) versions[name] = JSON.parse(await readFile(manifest, 'utf8')).version;
  }
  log.push(`installed: ${JSON.stringify(versions)}`);
  return versions;
}

/**
 * What the app's runner says it ran (Jest's `Tests:` line, or node:test's `pass N` and `tests N`), so the
 * summary shows a suite that quietly ran nothing.
 */
function testCount(output) {
  const jest = /^Tests:\s+(.+)$/m.exec(output);
  if (jest) return jest[1].trim();
  const nodeTests = /^(?:#|ℹ) tests (\d+)$/m.exec(output);
  const nodePassed = /^(?:#|ℹ) pass (\d+)$/m.exec(output);
  if (!nodeTests) return 'test count unknown';
  return `${nodePassed?.[1] ?? 0} passed, ${nodeTests[1]} total`;
}

async function testApp(app) {
  const log = [];
  const cwd = join(compat, app);
  const started = Date.now();
  try {
    if (update) {
      await forgetTarballs(app);
      await run('npm', ['install', '--no-audit', '--no-fund'], cwd, log);
      await dropTarballIntegrity(app);
    } else if (await dropTarballIntegrity(app)) {
      throw new Error(
        `compat/${app}/package-lock.json pins a hash for an @oncely tarball; ` +
          'run `node scripts/test-compat.mjs --update` and commit the lockfile',
      );
    }
    await run('npm', ['ci', '--no-audit', '--no-fund'], cwd, log);
    const versions = await installedVersions(app, log);
    const tests = testCount(await run('npm', ['test'], cwd, log));
    return { app, ok: true, seconds: (Date.now() - started) / 1000, versions, tests };
  } catch (error) {
    console.error(`\n----- compat/${app} failed -----\n${log.join('\n')}\n${error.message}`);
    return { app, ok: false, seconds: (Date.now() - started) / 1000 };
  }
}

const apps = (await readdir(compat, { withFileTypes: true }))
  .filter((entry) => entry.isDirectory() && existsSync(join(compat, entry.name, 'package.json')))
  .map((entry) => entry.name)
  .filter((app) => only.length === 0 || only.includes(app));
if (apps.length === 0) throw new Error(`no compat app matches ${only.join(', ')}`);

await packPackages();
const queue = [...apps];
const results = [];
await Promise.all(
  Array.from({ length: Math.min(PARALLEL, apps.length) }, async () => {
    for (let app = queue.shift(); app; app = queue.shift()) results.push(await testApp(app));
  }),
);

for (const { app, ok, seconds, versions, tests } of results.sort((a, b) =>
  a.app.localeCompare(b.app),
)) {
  const installed = versions
    ? Object.entries(versions)
        .map(([name, version]) => `${name}@${version}`)
        .join(' ')
    : '';
  const ran = tests ? `(${tests})  ` : '';
  console.log(
    `${ok ? 'pass' : 'FAIL'}  ${app.padEnd(16)} ${seconds.toFixed(0)}s  ${ran}${installed}`,
  );
}
if (results.some((result) => !result.ok)) process.exit(1);
