import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs `redis-cli` against a loopback port and returns its raw output. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    timeout: 30_000,
  });
  return stdout;
}

/** True when a redis-server answers PING on the port. */
export async function answersPing(port: number): Promise<boolean> {
  try {
    return (await redisCli(port, 'PING')).trim() === 'PONG';
  } catch {
    return false;
  }
}

/** Polls `check` every 50 ms until it holds, failing with `what` after `timeoutMs`. */
export async function waitUntil(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
