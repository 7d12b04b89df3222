#!/usr/bin/env node
import { createInterface } from 'node:readline/promises';
import { runCli } from '../cli/run-cli.js';

/** Asks on the terminal; only offered when someone is there to answer. */
async function confirm(question: string): Promise<boolean> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(`${question} `)).trim());
  } finally {
    terminal.close();
  }
}

/**
 * The `oncely` command. It exits as soon as the command is done: an app module it loaded may
 * have left a client open (an Express app building its Redis client at import), which must not
 * keep the command running.
 */
void runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  ...(process.stdin.isTTY && process.stderr.isTTY && { confirm }),
}).then((code) => {
  // Exit once both streams are flushed: a piped stdout is written asynchronously.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
});
