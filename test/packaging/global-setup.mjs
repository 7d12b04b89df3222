// Global setup of the packaging tests: they pack and load the built packages, so the build must
// be current. `npm run build` is incremental: a few seconds when nothing changed.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export default async function buildPackages() {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: root });
}
