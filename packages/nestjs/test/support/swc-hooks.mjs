// Module hooks compiling TypeScript with SWC and decorator metadata, exactly as the Jest
// transform does (esbuild, behind tsx, emits no `design:paramtypes`, which Nest's DI needs).
// Registered by `swc-register.mjs` in child processes that boot a Nest app.
import { transformFile } from '@swc/core';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const aliases = {
  '@oncely/core': 'packages/core/src/index.ts',
  '@oncely/core/adapter': 'packages/core/src/adapter.ts',
  '@oncely/redis': 'packages/redis/src/index.ts',
  '@oncely/typeorm': 'packages/typeorm/src/index.ts',
  '@oncely/nestjs': 'packages/nestjs/src/index.ts',
  '@oncely/testing-kit': 'libs/testing/src/index.ts',
};

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

export async function resolve(specifier, context, nextResolve) {
  const alias = aliases[specifier];
  if (alias) return { url: pathToFileURL(root + alias).href, shortCircuit: true };
  if (
    specifier.startsWith('.') &&
    specifier.endsWith('.js') &&
    context.parentURL?.endsWith('.ts')
  ) {
    const candidate = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const { code } = await transformFile(file, { ...options, filename: file });
  return { format: 'module', source: code, shortCircuit: true };
}
