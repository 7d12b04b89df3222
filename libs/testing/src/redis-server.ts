/**
 * Throwaway `redis-server` processes on spare loopback ports, for tests that must stop Redis,
 * count its commands undisturbed, or build a cluster. Each has its own temp directory and no
 * persistence; `stopAllRedisServers()` (call it in `afterAll`) kills whatever is left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort } from './free-port.js';
import { answersPing, waitUntil } from './redis-cli.js';

export interface RedisServerOptions {
  /** Fixed port; default a free random one (with its cluster bus port free when clustered). */
  readonly port?: number;
  /** Extra `redis-server` arguments, e.g. `['--cluster-enabled', 'yes']`. */
  readonly args?: readonly string[];
}

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly running: boolean;
  /** Starts the server again on the same port (after `stop`). */
  start(): Promise<void>;
  /** Stops the server (SIGKILL: as abrupt as a crash or a network cut) and waits for its exit. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const extra = options.args ?? [];
  const port =
    options.port ?? (await findFreePort({ clusterBus: extra.includes('--cluster-enabled') }));
  const dir = mkdtempSync(path.join(tmpdir(), `oncely-redis-${port}-`));
  let child: ChildProcess | undefined;

  const server: RedisServer = {
    host: '127.0.0.1',
    port,
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) return;
      const started = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--protected-mode',
          'no',
          ...extra,
        ],
        { stdio: 'ignore' },
      );
      live.add(started);
      started.once('exit', () => {
        live.delete(started);
        if (child === started) child = undefined;
      });
      child = started;
      await waitUntil(() => answersPing(port), `redis-server on port ${port}`);
    },
    async stop() {
      const running = child;
      if (!running) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
  };
  servers.add({ server, dir });
  await server.start();
  return server;
}

const servers = new Set<{ server: RedisServer; dir: string }>();

/** Stops every server started by this process and removes their directories. */
export async function stopAllRedisServers(): Promise<void> {
  const all = [...servers];
  servers.clear();
  await Promise.all(all.map(({ server }) => server.stop()));
  for (const { dir } of all) rmSync(dir, { recursive: true, force: true });
}
