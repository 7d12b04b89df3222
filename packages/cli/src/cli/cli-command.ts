/** Where a command writes, and the directory its relative paths start from. */
export interface CliIo {
  /** The directory relative paths on the command line start from. */
  readonly cwd: string;
  /** Writes to standard output: the command's result. */
  out(text: string): void;
  /** Writes to standard error: failures and how to fix them. */
  err(text: string): void;
}

/** What `oncely` exits with. */
export const ExitCode = {
  /** Done; for `check`, the app and the file agree. */
  ok: 0,
  /** `check` found differences. */
  differs: 1,
  /** The command could not run: bad arguments, an app that does not load, an unreadable file. */
  failed: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One command, such as `registry export`. */
export interface CliCommand {
  /** What follows the group's name on the command line, e.g. `export`. */
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** Its arguments and options, as `--help` shows them. */
  readonly usage: string;
  /** Runs with the arguments after the command's name; throws `UsageError` on bad ones. */
  run(args: readonly string[], io: CliIo): Promise<ExitCode>;
}

/**
 * A group of commands about one subject (`registry`; later `keys`, `inspect`, `release`,
 * `purge`), run as `oncely <group> <command>`.
 */
export interface CliCommandGroup {
  /** The group's name on the command line, e.g. `registry`. */
  readonly name: string;
  /** One line for the list of groups. */
  readonly summary: string;
  /** Its commands, in the order `--help` lists them. */
  readonly commands: readonly CliCommand[];
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
