#!/usr/bin/env node
// Transpiles the demo and the oncely packages it runs on (src/**/*.ts → dist/**/*.js) with SWC,
// emitting decorator metadata exactly as the Jest transform does. `npm start` uses it because a
// cold `tsc -b` takes half a minute on a small machine; `npm run build` stays the type-checked
// build (and also emits the .d.ts files this skips).
import { transformFile } from '@swc/core';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const projects = [
  'packages/core',
  'packages/redis',
  'packages/typeorm',
  'packages/nestjs',
  'apps/demo',
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
  projects.map(async (project) => {
    const src = join(root, project, 'src');
    const dist = join(root, project, 'dist');
    for (const file of await sourcesOf(src)) {
      const { code } = await transformFile(file, { ...options, filename: file });
      const target = join(dist, relative(src, file)).replace(/\.ts$/, '.js');
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, code);
      files += 1;
    }
  }),
);
console.log(`Transpiled ${files} files with SWC in ${Date.now() - started} ms.`);
