/**
 * Child Node processes running a TypeScript file through tsx, for tests that need real separate
 * processes (separate event loops, connections and memory, killable with SIGKILL). A worker talks
 * back with `reportToParent(message)` (one marked JSON line on stdout per message) and hears the
 * parent's `worker.send(message)` through `nextParentMessage()` (JSON lines on stdin).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const marker = '@@oncely-worker ';
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Called in a worker: sends one JSON-serialisable message to the test that spawned it. */
export function reportToParent(message: unknown): void {
  process.stdout.write(`${marker}${JSON.stringify(message)}\n`);
}

let parentMessages: AsyncIterator<string> | undefined;

/** Called in a worker: the next message the parent sent with `worker.send`. */
export async function nextParentMessage<T = unknown>(): Promise<T> {
  parentMessages ??= createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const line = await parentMessages.next();
  if (line.done) throw new Error('The parent closed stdin before sending a message.');
  return JSON.parse(line.value) as T;
}

export interface WorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface Worker {
  readonly pid: number;
  /** Messages received so far, in order. */
  readonly messages: readonly unknown[];
  /** Everything else the worker wrote, for failure messages. */
  readonly output: () => string;
  /** The first message (already received or still to come) satisfying `predicate`. */
  message<T = unknown>(predicate?: (message: T) => boolean, timeoutMs?: number): Promise<T>;
  /** Sends one JSON-serialisable message, read in the worker by `nextParentMessage()`. */
  send(message: unknown): void;
  /** SIGKILL by default: no clean-up code runs in the worker. */
  kill(signal?: NodeJS.Signals): void;
  readonly exited: Promise<WorkerExit>;
}

export interface SpawnOptions {
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

const live = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts one worker running `file` (absolute path or relative to the repository root). */
export function spawnWorker(file: string, options: SpawnOptions = {}): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...(options.args ?? [])], {
    cwd: repoRoot,
    // Jest's NODE_OPTIONS (--experimental-vm-modules) means nothing to a plain Node child.
    env: { ...process.env, NODE_OPTIONS: '', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  const messages: unknown[] = [];
  const listeners = new Set<() => void>();
  let output = '';
  let pending = '';
  let closed = false;

  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith(marker)) messages.push(JSON.parse(line.slice(marker.length)));
      else output += `${line}\n`;
    }
    for (const listener of [...listeners]) listener();
  });
  // A worker killed before reading its input must not turn into an EPIPE error here.
  child.stdin.on('error', () => undefined);
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });

  const exited = new Promise<WorkerExit>((resolve) => {
    // 'close' rather than 'exit': it comes after the last stdout chunk.
    child.once('close', (code, signal) => {
      closed = true;
      live.delete(child);
      for (const listener of [...listeners]) listener();
      resolve({ code, signal });
    });
  });

  return {
    pid: child.pid ?? -1,
    messages,
    output: () => output,
    message<T>(predicate: (message: T) => boolean = () => true, timeoutMs = 30_000) {
      return new Promise<T>((resolve, reject) => {
        const check = () => {
          const found = (messages as T[]).find(predicate);
          if (found !== undefined) return done(() => resolve(found));
          if (closed) {
            return done(() =>
              reject(new Error(`Worker ${child.pid} exited without that message:\n${output}`)),
            );
          }
        };
        const timer = setTimeout(
          () =>
            done(() =>
              reject(
                new Error(
                  `No such message from worker ${child.pid} in ${timeoutMs} ms:\n${output}`,
                ),
              ),
            ),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
    send(message: unknown) {
      child.stdin.write(`${JSON.stringify(message)}\n`);
    },
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      child.kill(signal);
    },
    exited,
  };
}

/** Starts `count` workers on the same file; `args(i)` gives each its own arguments. */
export function spawnWorkers(
  count: number,
  file: string,
  options: Omit<SpawnOptions, 'args'> & { args?: (index: number) => readonly string[] } = {},
): Worker[] {
  return Array.from({ length: count }, (_, index) =>
    spawnWorker(file, { env: options.env, args: options.args?.(index) ?? [] }),
  );
}

/** Kills (SIGKILL) every worker still running and waits for their exits. Use in `afterAll`. */
export async function killAllWorkers(): Promise<void> {
  const running = [...live];
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
