#!/usr/bin/env node
// `prepack` of every published package (npm runs it in the package's directory, before
// `npm pack` and `npm publish`): copies the repository's LICENSE in, so each tarball carries the
// one license text, and refuses to pack a package whose build is missing or incomplete.
import { copyFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';

const missing = ['dist/esm/index.js', 'dist/cjs/index.js', 'dist/cjs/package.json'].filter(
  (file) => !existsSync(file),
);
if (missing.length > 0) {
  console.error(`Missing ${missing.join(', ')}: run "npm run build" at the repository root first.`);
  process.exit(1);
}
await copyFile(new URL('../LICENSE', import.meta.url), 'LICENSE');
