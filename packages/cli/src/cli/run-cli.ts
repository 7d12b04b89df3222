import { registryCommands } from '../registry/registry.commands.js';
import { ExitCode, UsageError, type CliCommandGroup, type CliIo } from './cli-command.js';

/** Every command `oncely` knows, by group. */
export const ONCELY_COMMANDS: readonly CliCommandGroup[] = [registryCommands];

/**
 * Runs `oncely <group> <command> [arguments]` and returns its exit code: what the command
 * returns, `ExitCode.failed` (with the reason on `io.err`) on a bad command line or a failure.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  groups: readonly CliCommandGroup[] = ONCELY_COMMANDS,
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
    if (args.some(isHelp)) {
      io.out(`${command.usage}\n`);
      return ExitCode.ok;
    }
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${error.usage}\n`);
    } else {
      io.err(`${error instanceof Error ? error.message : String(error)}\n`);
    }
    return ExitCode.failed;
  }
}

function isHelp(arg: string): boolean {
  return arg === '--help' || arg === '-h' || arg === 'help';
}

function overviewOf(groups: readonly CliCommandGroup[]): string {
  return [
    'Usage: oncely <command> [arguments]',
    '',
    'Commands:',
    ...groups.flatMap((group) =>
      group.commands.map(
        (command) => `  ${`${group.name} ${command.name}`.padEnd(18)}${command.summary}`,
      ),
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
