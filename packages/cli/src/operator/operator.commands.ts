import type { CliCommand } from '../cli/cli-command.js';
import { inspectCommand } from './inspect.command.js';
import { keysCommand } from './keys.command.js';
import { purgeCommand } from './purge.command.js';
import { releaseCommand } from './release.command.js';

/** The operator commands, each run on its own: `oncely keys|inspect|release|purge`. */
export const operatorCommands: readonly CliCommand[] = [
  keysCommand,
  inspectCommand,
  releaseCommand,
  purgeCommand,
];
