import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const oncely = join(__dirname, '..', 'node_modules', '.bin', 'oncely');
const run = promisify(execFile);

// `npm test` builds dist/ first: the commands read the compiled module, as in a CI job. Neither
// runs the options factories, so neither needs PostgreSQL nor Redis.
describe('oncely registry on the README app module', () => {
  it('export writes the claims of the routes, owned by the service declared beside the factory', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'oncely-registry-')), 'oncely.registry.yaml');
    await run(oncely, ['registry', 'export', 'dist/app.module.js', '--file', file]);
    expect(await readFile(file, 'utf8')).toBe(await readFile('oncely.registry.yaml', 'utf8'));
  });

  it('check accepts the committed file', async () => {
    const { stdout } = await run(oncely, ['registry', 'check', 'dist/app.module.js']);
    expect(stdout).toBe('oncely.registry.yaml lists the 1 claim of shop-api.\n');
  });
});
