#!/usr/bin/env node
// Transpiles the demo (src/**/*.ts → dist/**/*.js) and the oncely packages it runs on (→ their
// ESM build, dist/esm/**/*.js) with SWC, emitting decorator metadata exactly as the Jest transform
// does, then completes the packages' builds as `npm run build` does (the Lua scripts). `npm start`
// uses it because a cold `tsc -b` takes half a minute on a small machine; `npm run build` stays
// the type-checked build (and also emits the .d.ts files and the CommonJS build this skips).
import { transformFile } from '@swc/core';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { completePackageBuilds } from '../../../scripts/complete-package-builds.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const projects = [
  ['packages/core', 'dist/esm'],
  ['packages/redis', 'dist/esm'],
  ['packages/typeorm', 'dist/esm'],
  ['packages/nestjs', 'dist/esm'],
  ['apps/demo', 'dist'],
];

const options = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

async function sourcesOf(dir) {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

const started = Date.now();
let files = 0;
await Promise.all(
  projects.map(async ([project, output]) => {
    const src = join(root, project, 'src');
    const dist = join(root, project, output);
    for (const file of await sourcesOf(src)) {
      const { code } = await transformFile(file, { ...options, filename: file });
      const target = join(dist, relative(src, file)).replace(/\.ts$/, '.js');
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, code);
      files += 1;
    }
  }),
);
await completePackageBuilds();
console.log(`Transpiled ${files} files with SWC in ${Date.now() - started} ms.`);
