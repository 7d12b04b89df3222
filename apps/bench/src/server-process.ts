import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BenchSettings } from './bench-settings.js';
import { resultsDir } from './bench-paths.js';

export interface ServerSpec {
  /** Names the process in logs and profiles, e.g. `oncely-redis/express`. */
  readonly name: string;
  readonly file: string;
  readonly env: Readonly<Record<string, string>>;
}

const BOOT_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
/** Preloaded under `BENCH_ALLOC_PROF=1`: the compiled `allocation-sampler.ts` beside this file. */
const allocationSampler = new URL('./allocation-sampler.js', import.meta.url).href;

/** One contender app in its own Node process on a loopback port. */
export class ServerProcess {
  private constructor(
    readonly spec: ServerSpec,
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly output: () => string,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(spec: ServerSpec, settings: BenchSettings): Promise<ServerProcess> {
    const profiles = path.join(resultsDir, 'profiles');
    const profileName = `${spec.name.replace(/\W+/g, '-')}-${Date.now()}`;
    const cpuProfile = settings.cpuProfile
      ? ['--cpu-prof', '--cpu-prof-dir', profiles, '--cpu-prof-name', `${profileName}.cpuprofile`]
      : [];
    const allocationProfile = settings.allocationProfile ? ['--import', allocationSampler] : [];
    if (settings.allocationProfile) mkdirSync(profiles, { recursive: true });
    const child = spawn(process.execPath, [...cpuProfile, ...allocationProfile, spec.file], {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        ...spec.env,
        ...(settings.allocationProfile && {
          BENCH_ALLOC_PROFILE: path.join(profiles, `${profileName}.heapprofile`),
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    child.once('exit', () => live.delete(child));
    let output = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${spec.name} did not start in ${BOOT_TIMEOUT_MS} ms:\n${output}`)),
        BOOT_TIMEOUT_MS,
      );
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${spec.name} exited (${code}) before listening:\n${output}`));
      });
      createInterface({ input: child.stdout }).on('line', (line) => {
        const message = parseLine(line);
        if (message?.listening === undefined) {
          output += `${line}\n`;
          return;
        }
        clearTimeout(timer);
        resolve(message.listening);
      });
    });
    return new ServerProcess(spec, port, child, () => output);
  }

  /** SIGTERM (the server closes and exits, writing its CPU profile), SIGKILL if it hangs. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  /** What the server wrote on stderr, for error messages. */
  log(): string {
    return this.output();
  }
}

const live = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function parseLine(line: string): { listening?: number } | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as { listening?: number };
  } catch {
    return undefined;
  }
}
