import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Each peer runs with its own pinned dependencies, installed next to it (never hoisted into the
 * workspace): @node-idempotency/nestjs needs Nest 10. A fresh clone has none yet: install them
 * from the peer's lockfile once. `marker` is a package the peer's `node_modules` then holds.
 */
export function ensurePeerInstalled(peerDir: string, marker: string): void {
  if (existsSync(path.join(peerDir, 'node_modules', marker))) return;
  console.log(`Installing the peer's pinned dependencies in ${peerDir} (first run only)…`);
  const result = spawnSync('npm', ['ci', '--no-workspaces', '--no-audit', '--no-fund'], {
    cwd: peerDir,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    throw new Error(
      `Installing the peer failed (npm ci in ${peerDir} exited ${result.status}). Run it by hand to see why.`,
    );
  }
}
