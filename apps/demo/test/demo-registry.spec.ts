import { runCli } from '@oncely/cli';
import { fileURLToPath } from 'node:url';

const demo = fileURLToPath(new URL('../', import.meta.url));

/**
 * The demo's checked-in registry (apps/demo/oncely.registry.yaml) lists exactly what its routes
 * claim; `npm run registry:check` checks the same against the compiled demo.
 */
describe("the demo's registry file", () => {
  it('lists every claim of the demo, and nothing else', async () => {
    let out = '';
    const code = await runCli(
      ['registry', 'check', 'src/demo-registry.module.ts', '--file', 'oncely.registry.yaml'],
      { cwd: demo, out: (text) => (out += text), err: (text) => (out += text) },
    );

    expect(out).toBe('oncely.registry.yaml lists the 6 claims of oncely-demo.\n');
    expect(code).toBe(0);
  });
});
