import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { oncely } from './fixtures/cli-session.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The command line itself: commands, help, usage errors and exit codes. */
describe('the oncely command', () => {
  it('lists its commands on --help, and refuses no command or an unknown one (exit 2)', async () => {
    const help = await oncely(root, '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('  registry export   writes the app');
    expect(help.out).toContain('  registry check    fails when the app');

    expect(await oncely(root)).toMatchObject({ code: 2, out: '' });
    expect((await oncely(root)).err).toMatch(/^Name a command\.\n\nUsage: oncely <command>/);
    expect(help.out).toContain('  keys              lists the records and SingleFlight keys');
    expect(help.out).toContain('  purge             deletes expired records');
    expect((await oncely(root, 'bogus')).err).toMatch(/^Unknown command "bogus"\./);
    expect((await oncely(root, 'registry')).err).toMatch(
      /^"oncely registry" needs a command\.\n\noncely registry: /,
    );
    expect((await oncely(root, 'registry', 'purge')).err).toMatch(
      /^Unknown command "registry purge"\./,
    );
  });

  it("shows a command's usage on --help and after a bad command line", async () => {
    const help = await oncely(root, 'registry', 'check', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: oncely registry check <module> \[--file <path>\]/);

    const none = await oncely(root, 'registry', 'export');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(
      /^Name the module exporting the app\.\n\nUsage: oncely registry export/,
    );
    expect((await oncely(root, 'registry', 'export', 'a.js', 'b.js')).err).toMatch(
      /^Name one module, got 2: a\.js b\.js\./,
    );
    expect((await oncely(root, 'registry', 'export', 'a.js', '--bogus')).err).toMatch(
      /^Unknown option '--bogus'/,
    );
  });

  it('exits with the code of its command as a process: 1 while claims differ, 0 after export', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oncely-bin-'));
    const run = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        [
          '--import',
          join(root, 'packages/nestjs/test/support/swc-register.mjs'),
          join(root, 'packages/cli/src/bin/oncely.ts'),
          ...args,
        ],
        { cwd: dir, env: { ...process.env, NODE_OPTIONS: '' } },
      ).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const shop = fileURLToPath(new URL('./fixtures/shop.module.ts', import.meta.url));
    const withRefunds = fileURLToPath(
      new URL('./fixtures/shop-with-refunds.module.ts', import.meta.url),
    );
    try {
      expect(await run('registry', 'export', shop)).toMatchObject({ code: 0 });
      const differs = await run('registry', 'check', withRefunds);
      expect(differs.code).toBe(1);
      expect(differs.stdout).toContain('  added     idempotency shop:refund-create:v1');
      expect(await run('registry', 'export', withRefunds)).toMatchObject({ code: 0 });
      expect(await run('registry', 'check', withRefunds)).toEqual({
        code: 0,
        stdout: 'oncely.registry.yaml lists the 3 claims of shop-api.\n',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
