import { parseArgs } from 'node:util';
import { ExitCode, UsageError, type CliIo } from '../cli/cli-command.js';
import {
  CONNECTION_OPTIONS,
  connectOperator,
  connectionFlagsOf,
  type ConnectionFlags,
  type OperatorConnection,
} from './operator-connection.js';
import { operatorTargetOf, targetFormsOf, type OperatorTarget } from './operator-target.js';

type FlagOptions = Record<string, { readonly type: 'boolean'; readonly short?: string }>;

/** An operator command's parsed command line. */
export interface OperatorCommandLine {
  readonly positionals: readonly string[];
  readonly connection: ConnectionFlags;
  readonly json: boolean;
  /** The command's own boolean flags (`--yes`, `--show-body`, `--expired`). */
  readonly flags: Readonly<Record<string, boolean>>;
}

/** Parses the connection flags, `--json` and the command's own boolean `flags`. */
export function operatorCommandLineOf(
  args: readonly string[],
  io: CliIo,
  usage: string,
  flags: FlagOptions = {},
): OperatorCommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { ...CONNECTION_OPTIONS, json: { type: 'boolean' }, ...flags },
    });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
  const { positionals, values } = parsed;
  const own: Record<string, boolean> = {};
  for (const name of Object.keys(flags))
    own[name] = (values as Record<string, unknown>)[name] === true;
  return {
    positionals,
    connection: connectionFlagsOf(values, io.env ?? {}, usage),
    json: values.json === true,
    flags: own,
  };
}

/** The one target a command takes, of the kinds it accepts. */
export function oneTargetOf(
  positionals: readonly string[],
  usage: string,
  accepted: ReadonlyArray<OperatorTarget['kind']> = ['key', 'identity', 'operation'],
): OperatorTarget {
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? `Name ${targetFormsOf(accepted)}.`
        : `Name one target, got ${positionals.length}: ${positionals.join(' ')}.`,
      usage,
    );
  }
  const target = operatorTargetOf(positionals[0]!);
  if (target === undefined || !accepted.includes(target.kind)) {
    throw new UsageError(`"${positionals[0]}" is not ${targetFormsOf(accepted)}.`, usage);
  }
  return target;
}

/** Runs `work` with a connection, closing what was opened whatever happens. */
export async function withConnection<T>(
  command: OperatorCommandLine,
  io: CliIo,
  work: (connection: OperatorConnection) => Promise<T>,
): Promise<T> {
  const connection = await connectOperator(command.connection, io.cwd);
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}

/**
 * Whether a destructive command may go on: `--yes`, or an operator's "yes" on a terminal.
 * Without a terminal and without `--yes` it refuses (a script must say it means it), writing
 * why on `io.err`.
 */
export async function confirmed(
  command: OperatorCommandLine,
  io: CliIo,
  question: string,
): Promise<boolean> {
  if (command.flags['yes']) return true;
  if (!io.confirm) {
    io.err(
      `${question}\nRefused: no terminal to confirm on. Run it again with --yes to confirm.\n`,
    );
    return false;
  }
  if (await io.confirm(question)) return true;
  io.err('Cancelled.\n');
  return false;
}

/** Writes `value` as JSON, one document, for scripts. */
export function writeJson(io: CliIo, value: unknown): ExitCode {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
  return ExitCode.ok;
}

/** The usage lines of `--yes`. */
export const YES_USAGE = `  --yes, -y           do not ask for confirmation (needed when not on a terminal)`;
