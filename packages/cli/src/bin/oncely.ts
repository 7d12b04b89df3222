#!/usr/bin/env node
import { runCli } from '../cli/run-cli.js';

/**
 * The `oncely` command. It exits as soon as the command is done: an app module it loaded may
 * have left a client open (an Express app building its Redis client at import), which must not
 * keep the command running.
 */
void runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}).then((code) => {
  // Exit once both streams are flushed: a piped stdout is written asynchronously.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
});
