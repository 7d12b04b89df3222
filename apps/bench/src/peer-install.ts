import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { peerDir } from './bench-paths.js';

/**
 * The peer runs on Nest 10 with its own pinned dependencies, installed next to it (never hoisted
 * into the workspace). A fresh clone has none yet: install them from its lockfile once.
 */
export function ensurePeerInstalled(): void {
  if (existsSync(path.join(peerDir, 'node_modules', '@node-idempotency', 'nestjs'))) return;
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
