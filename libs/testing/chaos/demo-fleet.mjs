// Demo processes (chaos-node.mjs) for one scenario, each on its own loopback port, sharing one
// PostgreSQL database and one execution log. Every process started here is tracked by PID and
// killed by `stop()` or, whatever happens, when the runner exits.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findFreePort } from '@oncely/testing-kit';

const entry = fileURLToPath(new URL('./chaos-node.mjs', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const live = new Set();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `count` demo processes (the first alone, so it runs the migrations) with `env` on top
 * of the chaos node's own variables. `startTimeoutMs` is generous: this box is shared.
 */
export async function startFleet({ name, count = 3, env, startTimeoutMs = 90_000 }) {
  const dir = mkdtempSync(path.join(tmpdir(), `oncely-chaos-${name}-`));
  const execLog = path.join(dir, 'executions.log');
  const nodes = [];
  const outputs = [];
  let restarts = 0;

  async function launch(index, port) {
    const child = spawn(process.execPath, ['--expose-gc', entry], {
      cwd: root,
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        NODE_ENV: 'production',
        ...env,
        PORT: String(port),
        CHAOS_EXEC_LOG: execLog,
        CHAOS_MEMORY_FILE: path.join(dir, `memory-${index}.json`),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    exited.then(() => live.delete(child));
    const node = {
      index,
      port,
      url: `http://127.0.0.1:${port}`,
      child,
      pid: child.pid,
      exited,
      output: () => output,
      memoryFile: path.join(dir, `memory-${index}.json`),
    };
    const deadline = Date.now() + startTimeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      const ok = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(2_000) })
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) return node;
      await sleep(150);
    }
    child.kill('SIGKILL');
    throw new Error(`chaos demo process ${name}#${index} did not become healthy:\n${output}`);
  }

  const fleet = {
    dir,
    nodes,
    get restarts() {
      return restarts;
    },
    /** SIGKILL: no shutdown hook, no clean-up, as abrupt as a crash. */
    async kill(index) {
      const node = nodes[index];
      node.child.kill('SIGKILL');
      await node.exited;
    },
    /** A new process on the same port, after `kill`. */
    async restart(index) {
      outputs.push(nodes[index].output());
      nodes[index] = await launch(index, nodes[index].port);
      restarts += 1;
    },
    alive() {
      return nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
    },
    /** Handler executions per operation, from the log every process appends to. */
    executions() {
      const counts = {};
      if (!existsSync(execLog)) return counts;
      for (const line of readFileSync(execLog, 'utf8').split('\n')) {
        if (line) counts[line] = (counts[line] ?? 0) + 1;
      }
      return counts;
    },
    /** Everything every process (including killed ones) wrote. */
    outputs() {
      return [...outputs, ...nodes.map((n) => n.output())];
    },
    memory() {
      return nodes.map((n) => {
        try {
          const usage = JSON.parse(readFileSync(n.memoryFile, 'utf8'));
          return { pid: n.pid, rss: usage.rss, heapUsed: usage.heapUsed };
        } catch {
          return undefined;
        }
      });
    },
    async stop() {
      await Promise.all(
        nodes.map(async (node) => {
          if (node.child.exitCode !== null || node.child.signalCode !== null) return;
          node.child.kill('SIGKILL');
          await node.exited;
        }),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    const first = await launch(0, await findFreePort());
    nodes.push(first);
    const ports = [];
    for (let i = 1; i < count; i++) ports.push(await findFreePort());
    nodes.push(...(await Promise.all(ports.map((port, i) => launch(i + 1, port)))));
  } catch (error) {
    await fleet.stop();
    throw error;
  }
  return fleet;
}
