#!/usr/bin/env node
// The part of `npm run build` tsc cannot do, run after it (and after the demo's SWC transpile):
// - dist/cjs/package.json `{"type": "commonjs"}`: the packages are "type": "module", so without
//   it Node would read the CommonJS build's .js files as ES modules;
// - dist/lua/, a copy of a package's lua/ (the Lua scripts of @oncely/redis): it sits next to
//   dist/esm/ and dist/cjs/ as lua/ sits next to src/, so compiled code finds the scripts at the
//   same relative path as the sources do (see packages/redis/src/scripts/lua-scripts.ts).
import { cp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packagesDir = new URL('../packages/', import.meta.url);

/** Completes the build of every package under packages/ whose tsc or SWC output exists. */
export async function completePackageBuilds() {
  for (const name of await readdir(packagesDir)) {
    const packageDir = new URL(`${name}/`, packagesDir);
    if (existsSync(new URL('dist/cjs/', packageDir))) {
      await writeFile(new URL('dist/cjs/package.json', packageDir), '{ "type": "commonjs" }\n');
    }
    const lua = new URL('lua/', packageDir);
    if (existsSync(lua) && existsSync(new URL('dist/', packageDir))) {
      const target = new URL('dist/lua/', packageDir);
      await rm(target, { recursive: true, force: true });
      await cp(fileURLToPath(lua), fileURLToPath(target), { recursive: true });
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await completePackageBuilds();
