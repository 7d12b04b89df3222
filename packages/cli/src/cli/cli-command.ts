/** Where a command writes, and the directory its relative paths start from. */
export interface CliIo {
  /** The directory relative paths on the command line start from. */
  readonly cwd: string;
  /** Writes to standard output: the command's result. */
  out(text: string): void;
  /** Writes to standard error: failures and how to fix them. */
  err(text: string): void;
  /** Environment variables read for connections (`ONCELY_REDIS_URL`, …); none when absent. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Asks the operator a yes/no question and resolves their answer. Present only when someone
   * can answer (standard input and output are a terminal): without it, a command that needs a
   * confirmation refuses unless given `--yes`.
   */
  confirm?(question: string): Promise<boolean>;
}

/** What `oncely` exits with. */
export const ExitCode = {
  /** Done; for `check`, the app and the file agree. */
  ok: 0,
  /** `check` found differences. */
  differs: 1,
  /**
   * The command could not run: bad arguments, an app that does not load, an unreadable file, a
   * store that cannot be reached, a destructive command neither confirmed nor given `--yes`.
   */
  failed: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One command, such as `registry export` (in a group) or `keys` (on its own). */
export interface CliCommand {
  /** What follows the group's name on the command line, e.g. `export`, or `oncely` itself. */
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** Its arguments and options, as `--help` shows them. */
  readonly usage: string;
  /** Runs with the arguments after the command's name; throws `UsageError` on bad ones. */
  run(args: readonly string[], io: CliIo): Promise<ExitCode>;
}

/** A group of commands about one subject (`registry`), run as `oncely <group> <command>`. */
export interface CliCommandGroup {
  /** The group's name on the command line, e.g. `registry`. */
  readonly name: string;
  /** One line for the list of groups. */
  readonly summary: string;
  /** Its commands, in the order `--help` lists them. */
  readonly commands: readonly CliCommand[];
}

/** A group of commands, or a command run on its own as `oncely <command>` (`keys`, `inspect`, …). */
export type CliEntry = CliCommandGroup | CliCommand;

/** Whether `entry` is a group of commands rather than a command of its own. */
export function isCommandGroup(entry: CliEntry): entry is CliCommandGroup {
  return 'commands' in entry;
}

/** The command line is wrong; the message says how, and the command's usage follows it. */
export class UsageError extends Error {
  /** The class's name, kept by bundlers that rename classes. */
  override readonly name = 'UsageError';

  constructor(
    message: string,
    /** The usage to show with it: the command's, or the list of commands. */
    readonly usage: string,
  ) {
    super(message);
  }
}
