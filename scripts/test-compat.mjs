#!/usr/bin/env node
// The compatibility matrix (compat/README.md): packs every @oncely/* package as `npm pack` makes
// it for the registry, copies each consumer app under compat/ to a directory of its own outside
// the repository, installs the tarballs there from the app's own lockfile with the app's own
// package manager, and runs the app's own tests with its own runner.
//
//   node scripts/test-compat.mjs [--update] [app...]
//
// --update re-resolves each app's lockfile (`npm install`, `pnpm install`) instead of installing
// it frozen, and writes it back to compat/<app>/: for a changed app manifest or a new dependency
// of an @oncely package.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeDrift } from './readme-examples.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const compat = join(root, 'compat');
const packed = join(compat, 'packed');
const PACKAGES = ['core', 'redis', 'typeorm', 'nestjs', 'express', 'cli'];
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
/** The pnpm major the pnpm apps' lockfiles are written with. */
const PNPM_MAJOR = '12';
// Two apps at a time: each runs a server and a test runner, and the machine has two cores.
const PARALLEL = Number(process.env.COMPAT_PARALLEL ?? 2);
// An install or a test run takes a few minutes; one that hangs fails its app instead of the run.
const STEP_TIMEOUT_MS = Number(process.env.COMPAT_STEP_TIMEOUT_S ?? 600) * 1000;

const args = process.argv.slice(2);
const update = args.includes('--update');
const only = args.filter((arg) => !arg.startsWith('--'));

/** The steps under way, each the leader of its own process group. */
const running = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const child of running) process.kill(-child.pid, 'SIGKILL');
    process.exit(1);
  });
}

function run(command, commandArgs, cwd, log) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      cwd,
      // The monorepo's own test command sets ESM flags; a consumer app must run without them.
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A group of its own, so a step that hangs is killed with every server it started.
      detached: true,
    });
    running.add(child);
    const timer = setTimeout(() => {
      log.push(`$ ${command} ${commandArgs.join(' ')}: killed after ${STEP_TIMEOUT_MS / 1000} s`);
      process.kill(-child.pid, 'SIGKILL');
    }, STEP_TIMEOUT_MS);
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      log.push(`$ ${command} ${commandArgs.join(' ')}\n${output}`);
      if (code === 0) resolve({ output, stdout });
      else reject(new Error(`${command} ${commandArgs.join(' ')} exited with ${code}`));
    });
  });
}

/**
 * Packs each package to compat/packed/oncely-<name>.tgz (a name the app manifests can pin) and
 * returns the files each tarball holds, by package name.
 */
async function packPackages() {
  await rm(packed, { recursive: true, force: true });
  await mkdir(packed, { recursive: true });
  const log = [];
  await run('npm', ['run', 'build', '--silent'], root, log);
  const contents = {};
  for (const name of PACKAGES) {
    const { stdout } = await run(
      'npm',
      ['pack', '--json', '--pack-destination', packed],
      join(root, 'packages', name),
      log,
    );
    const [pack] = JSON.parse(stdout);
    await rename(join(packed, pack.filename), join(packed, `oncely-${name}.tgz`));
    contents[name] = pack.files.map((file) => file.path);
  }
  return contents;
}

/**
 * The app's package manager: pnpm for an app with a pnpm-workspace.yaml (its settings), the
 * installed one if it is of the major below, else fetched by npx; npm otherwise. Each `frozen`
 * install only reads the lockfile; `resolve` re-resolves it.
 */
async function packageManager(app) {
  if (existsSync(join(compat, app, 'pnpm-workspace.yaml'))) {
    const { stdout: installed } = await run('pnpm', ['--version'], root, []).catch(() => ({
      stdout: '',
    }));
    return {
      lockfile: 'pnpm-lock.yaml',
      command: installed.startsWith(`${PNPM_MAJOR}.`)
        ? ['pnpm']
        : ['npx', '--yes', `pnpm@${PNPM_MAJOR}`],
      frozen: ['install', '--frozen-lockfile'],
      resolve: ['install', '--no-frozen-lockfile'],
    };
  }
  return {
    lockfile: 'package-lock.json',
    command: ['npm'],
    frozen: ['ci', '--no-audit', '--no-fund'],
    resolve: ['install', '--no-audit', '--no-fund'],
  };
}

/**
 * The `@oncely/*` tarballs a lockfile pins a hash for. npm installs whatever its cache holds
 * under that hash (the tarball of an earlier build, not the one just packed); pnpm refuses the
 * new tarball. Without the hash both unpack the file as it is now, and a frozen install does not
 * add one back.
 */
function hashedTarballs(lockfile, text) {
  if (lockfile === 'pnpm-lock.yaml') {
    // pnpm writes each resolution on one line: `resolution: {integrity: …, tarball: file:…}`.
    return [...text.matchAll(/resolution: \{integrity: [^}]*tarball: (file:[^}]+)\}/g)].map(
      (match) => match[1],
    );
  }
  return Object.entries(JSON.parse(text).packages ?? {})
    .filter(([, entry]) => entry.resolved?.startsWith('file:') && entry.integrity)
    .map(([path]) => path);
}

/** Drops the hashes `hashedTarballs` finds, as `npm install` and `pnpm install` write them. */
async function dropTarballIntegrity(lockfile, path) {
  const text = await readFile(path, 'utf8');
  let stripped;
  if (lockfile === 'pnpm-lock.yaml') {
    stripped = text.replace(
      /resolution: \{integrity: [^,}]+, (tarball: file:[^}]+)\}/g,
      'resolution: {$1}',
    );
  } else {
    const lock = JSON.parse(text);
    for (const entry of Object.values(lock.packages ?? {})) {
      if (entry.resolved?.startsWith('file:')) delete entry.integrity;
    }
    stripped = `${JSON.stringify(lock, null, 2)}\n`;
  }
  const left = hashedTarballs(lockfile, stripped);
  if (left.length > 0) throw new Error(`${path}: cannot drop the hash of ${left.join(', ')}`);
  await writeFile(path, stripped);
}

/**
 * npm trusts what the lockfile says a `file:` tarball depends on, so a dependency added to an
 * @oncely package would never reach the app's lockfile: `--update` drops those entries first and
 * lets `npm install` read the tarballs again. (pnpm reads a tarball again once its hash is gone.)
 */
async function forgetTarballs(path) {
  const lock = JSON.parse(await readFile(path, 'utf8'));
  for (const [entry, { resolved }] of Object.entries(lock.packages ?? {})) {
    if (resolved?.startsWith('file:')) delete lock.packages[entry];
  }
  await writeFile(path, `${JSON.stringify(lock, null, 2)}\n`);
}

/**
 * A copy of compat/<app> (without what an install or a build leaves) in a new directory under the
 * system's temporary one, beside a copy of the tarballs, so `file:../packed/…` resolves and
 * nothing above the app (the monorepo's node_modules) can lend it a package it did not declare.
 */
async function copyApp(app) {
  const base = await mkdtemp(join(tmpdir(), `oncely-compat-${app}-`));
  await cp(packed, join(base, 'packed'), { recursive: true });
  await cp(join(compat, app), join(base, app), {
    recursive: true,
    filter: (path) =>
      !['node_modules', 'dist'].includes(basename(path)) && !path.endsWith('.tsbuildinfo'),
  });
  return { base, cwd: join(base, app) };
}

/** Every file of each installed @oncely package is the one just packed, not a cached copy. */
async function checkFreshTarballs(cwd, contents) {
  for (const [name, files] of Object.entries(contents)) {
    const installed = join(cwd, 'node_modules', '@oncely', name);
    if (!existsSync(installed)) continue;
    for (const file of files) {
      const [want, got] = await Promise.all([
        readFile(join(root, 'packages', name, file)),
        readFile(join(installed, file)).catch(() => undefined),
      ]);
      if (!got?.equals(want)) {
        throw new Error(
          `the installed @oncely/${name} has another ${file} than the tarball just packed: ` +
            'the package manager installed a cached copy',
        );
      }
    }
  }
}

async function installedVersions(cwd, log) {
  const versions = {};
  for (const name of REPORTED) {
    const manifest = join(cwd, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) versions[name] = JSON.parse(await readFile(manifest, 'utf8')).version;
  }
  log.push(`installed: ${JSON.stringify(versions)}`);
  return versions;
}

/**
 * What the app's runner says it ran (Jest's `Tests:` line, one per Jest run, or node:test's
 * `pass N` and `tests N`), so the summary shows a suite that quietly ran nothing.
 */
function testCount(output) {
  const jest = [...output.matchAll(/^Tests:\s+(.+)$/gm)].map((match) => match[1].trim());
  if (jest.length > 0) return jest.join(' + ');
  const nodeTests = /^(?:#|ℹ) tests (\d+)$/m.exec(output);
  const nodePassed = /^(?:#|ℹ) pass (\d+)$/m.exec(output);
  if (!nodeTests) return 'test count unknown';
  return `${nodePassed?.[1] ?? 0} passed, ${nodeTests[1]} total`;
}

async function testApp(app, contents) {
  const log = [];
  const started = Date.now();
  const manager = await packageManager(app);
  const [command, ...prefix] = manager.command;
  const committed = join(compat, app, manager.lockfile);
  let base;
  try {
    if (!update && !existsSync(committed)) {
      throw new Error(
        `compat/${app} has no ${manager.lockfile}; ` +
          `run \`node scripts/test-compat.mjs --update ${app}\` and commit it`,
      );
    }
    const hashed = update
      ? []
      : hashedTarballs(manager.lockfile, await readFile(committed, 'utf8'));
    if (hashed.length > 0) {
      throw new Error(
        `compat/${app}/${manager.lockfile} pins a hash for ${hashed.join(', ')}; ` +
          `run \`node scripts/test-compat.mjs --update ${app}\` and commit the lockfile`,
      );
    }
    const copy = await copyApp(app);
    base = copy.base;
    const lockfile = join(copy.cwd, manager.lockfile);
    if (update) {
      if (manager.lockfile === 'package-lock.json' && existsSync(lockfile)) {
        await forgetTarballs(lockfile);
      }
      await run(command, [...prefix, ...manager.resolve], copy.cwd, log);
      await dropTarballIntegrity(manager.lockfile, lockfile);
      await copyFile(lockfile, committed);
      await rm(join(copy.cwd, 'node_modules'), { recursive: true, force: true });
    }
    await run(command, [...prefix, ...manager.frozen], copy.cwd, log);
    await checkFreshTarballs(copy.cwd, contents);
    const versions = await installedVersions(copy.cwd, log);
    const tests = testCount((await run(command, [...prefix, 'test'], copy.cwd, log)).output);
    await rm(base, { recursive: true, force: true });
    return { app, ok: true, seconds: (Date.now() - started) / 1000, versions, tests };
  } catch (error) {
    const kept = base ? `\n(the app's copy is kept in ${base})` : '';
    console.error(`\n----- compat/${app} failed -----\n${log.join('\n')}\n${error.message}${kept}`);
    return { app, ok: false, seconds: (Date.now() - started) / 1000 };
  }
}

const apps = (await readdir(compat, { withFileTypes: true }))
  .filter((entry) => entry.isDirectory() && existsSync(join(compat, entry.name, 'package.json')))
  .map((entry) => entry.name)
  .filter((app) => only.length === 0 || only.includes(app));
if (apps.length === 0) throw new Error(`no compat app matches ${only.join(', ')}`);

// The README's examples first: a block and its file that differ fail before anything installs.
const drift = await readmeDrift(root, apps);
if (drift.length > 0) {
  console.error(drift.join('\n\n'));
  process.exit(1);
}

const contents = await packPackages();
const queue = [...apps];
const results = [];
await Promise.all(
  Array.from({ length: Math.min(PARALLEL, apps.length) }, async () => {
    for (let app = queue.shift(); app; app = queue.shift()) {
      console.log(`compat/${app}: installing and testing`);
      const result = await testApp(app, contents);
      console.log(
        `compat/${app}: ${result.ok ? 'passed' : 'FAILED'} in ${result.seconds.toFixed(0)} s`,
      );
      results.push(result);
    }
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
