import { types } from 'node:util';
import { registryCommands } from '../registry/registry.commands.js';
import { operatorCommands } from '../operator/operator.commands.js';
import {
  ExitCode,
  UsageError,
  isCommandGroup,
  type CliCommand,
  type CliCommandGroup,
  type CliEntry,
  type CliIo,
} from './cli-command.js';

/** Every command `oncely` knows: groups (`registry`) and commands of their own (`keys`, …). */
export const ONCELY_COMMANDS: readonly CliEntry[] = [registryCommands, ...operatorCommands];

/**
 * Runs `oncely <group> <command> [arguments]` and returns its exit code: what the command
 * returns, `ExitCode.failed` (with the reason on `io.err`) on a bad command line or a failure.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  groups: readonly CliEntry[] = ONCELY_COMMANDS,
): Promise<ExitCode> {
  const overview = overviewOf(groups);
  const [groupName, commandName, ...args] = argv;
  try {
    if (groupName === undefined) throw new UsageError('Name a command.', overview);
    if (isHelp(groupName)) {
      io.out(overview);
      return ExitCode.ok;
    }
    const group = groups.find((candidate) => candidate.name === groupName);
    if (!group) throw new UsageError(`Unknown command "${groupName}".`, overview);
    if (!isCommandGroup(group)) return await runCommand(group, argv.slice(1), io);
    const command = group.commands.find((candidate) => candidate.name === commandName);
    if (!command) {
      if (commandName !== undefined && isHelp(commandName)) {
        io.out(groupOverviewOf(group));
        return ExitCode.ok;
      }
      throw new UsageError(
        commandName === undefined
          ? `"oncely ${group.name}" needs a command.`
          : `Unknown command "${group.name} ${commandName}".`,
        groupOverviewOf(group),
      );
    }
    return await runCommand(command, args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${error.usage}\n`);
    } else {
      io.err(`${types.isNativeError(error) ? error.message : String(error)}\n`);
    }
    return ExitCode.failed;
  }
}

async function runCommand(
  command: CliCommand,
  args: readonly string[],
  io: CliIo,
): Promise<ExitCode> {
  if (args.some(isHelp)) {
    io.out(`${command.usage}\n`);
    return ExitCode.ok;
  }
  return command.run(args, io);
}

function isHelp(arg: string): boolean {
  return arg === '--help' || arg === '-h' || arg === 'help';
}

function overviewOf(groups: readonly CliEntry[]): string {
  return [
    'Usage: oncely <command> [arguments]',
    '',
    'Commands:',
    ...groups.flatMap((group) =>
      isCommandGroup(group)
        ? group.commands.map(
            (command) => `  ${`${group.name} ${command.name}`.padEnd(18)}${command.summary}`,
          )
        : [`  ${group.name.padEnd(18)}${group.summary}`],
    ),
    '',
    'Run "oncely <command> --help" for its arguments.',
    '',
  ].join('\n');
}

function groupOverviewOf(group: CliCommandGroup): string {
  return [
    `oncely ${group.name}: ${group.summary}`,
    '',
    ...group.commands.map((command) => `  ${command.name.padEnd(10)}${command.summary}`),
    '',
  ].join('\n');
}
