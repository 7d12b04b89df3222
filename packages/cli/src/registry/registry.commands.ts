import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ExitCode,
  UsageError,
  type CliCommand,
  type CliCommandGroup,
  type CliIo,
} from '../cli/cli-command.js';
import { loadAppClaims, type AppClaims } from './app-claims.loader.js';
import { describeChanges, diffRegistries } from './registry-diff.js';
import {
  DEFAULT_REGISTRY_FILE,
  parseRegistry,
  registryDocumentOf,
  renderRegistry,
} from './registry-document.js';
import { RegistryFileError } from './registry-file.error.js';

const OPTIONS_USAGE = `  <module>          the compiled module exporting the app: its root Nest module (a class, or
                    a DynamicModule), or the oncely instance of an Express app
  --file, -f <path> the registry file (default: ${DEFAULT_REGISTRY_FILE})
  --export <name>   the module's export holding the app (default: its default export, or its
                    only Nest module or oncely instance)`;

const exportCommand: CliCommand = {
  name: 'export',
  summary: "writes the app's claims to the registry file",
  usage: `Usage: oncely registry export <module> [--file <path>] [--export <name>]

Loads the app without starting it (no provider is created, nothing connects) and writes every
claim its routes make to the registry file, to be committed.

${OPTIONS_USAGE}`,
  async run(args, io) {
    const command = commandLineOf(args, this.usage);
    const app = await appClaimsOf(command, io);
    await writeFile(resolve(io.cwd, command.file), renderRegistry(documentOf(app)));
    io.out(`Wrote the ${countOf(app)} of ${app.service} to ${command.file}.\n`);
    return ExitCode.ok;
  },
};

const checkCommand: CliCommand = {
  name: 'check',
  summary: "fails when the app's claims differ from the registry file",
  usage: `Usage: oncely registry check <module> [--file <path>] [--export <name>]

Loads the app as export does and compares its claims with the registry file: exits 0 when they
agree, 1 (listing what was added, removed or changed) when they differ, 2 when either cannot be
read.

${OPTIONS_USAGE}`,
  async run(args, io) {
    const command = commandLineOf(args, this.usage);
    const app = await appClaimsOf(command, io);
    const file = parseRegistry(await readRegistryFile(command, io), command.file);
    const changes = diffRegistries(file, documentOf(app));
    if (changes.length === 0) {
      io.out(`${command.file} lists the ${countOf(app)} of ${app.service}.\n`);
      return ExitCode.ok;
    }
    io.out(
      `The claims of ${app.service} differ from ${command.file}:\n${describeChanges(changes)}` +
        `Review the change, then update the file with\n  oncely registry export ${exportArgumentsOf(command)}\nand commit it.\n`,
    );
    return ExitCode.differs;
  },
};

/** `oncely registry export|check`: the service's claims as a file reviewed like code. */
export const registryCommands: CliCommandGroup = {
  name: 'registry',
  summary: "the service's claims as a file, reviewed like code",
  commands: [exportCommand, checkCommand],
};

interface RegistryCommandLine {
  readonly module: string;
  readonly file: string;
  readonly exportName?: string;
}

function commandLineOf(args: readonly string[], usage: string): RegistryCommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        file: { type: 'string', short: 'f', default: DEFAULT_REGISTRY_FILE },
        export: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
  const { positionals, values } = parsed;
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'Name the module exporting the app.'
        : `Name one module, got ${positionals.length}: ${positionals.join(' ')}.`,
      usage,
    );
  }
  return {
    module: positionals[0]!,
    file: values.file,
    ...(values.export !== undefined && { exportName: values.export }),
  };
}

function appClaimsOf(command: RegistryCommandLine, io: CliIo): Promise<AppClaims> {
  return loadAppClaims(resolve(io.cwd, command.module), command.exportName, command.module);
}

async function readRegistryFile(command: RegistryCommandLine, io: CliIo): Promise<string> {
  try {
    return await readFile(resolve(io.cwd, command.file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new RegistryFileError(
      command.file,
      `does not exist. Write it with\n  oncely registry export ${exportArgumentsOf(command)}\nand commit it.`,
    );
  }
}

function documentOf(app: AppClaims) {
  return registryDocumentOf(app.service, app.claims);
}

function countOf(app: AppClaims): string {
  return app.claims.length === 1 ? '1 claim' : `${app.claims.length} claims`;
}

function exportArgumentsOf(command: RegistryCommandLine): string {
  return [
    command.module,
    ...(command.file === DEFAULT_REGISTRY_FILE ? [] : ['--file', command.file]),
    ...(command.exportName === undefined ? [] : ['--export', command.exportName]),
  ].join(' ');
}
