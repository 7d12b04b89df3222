import { ExitCode, type CliCommand } from '../cli/cli-command.js';
import { CONNECTION_USAGE } from './operator-connection.js';
import {
  oneTargetOf,
  operatorCommandLineOf,
  withConnection,
  writeJson,
} from './operator-command-line.js';
import { listOperation, renderListing } from './operation-listing.js';

/** `oncely keys <operation>`: the records and SingleFlight keys of an operation. */
export const keysCommand: CliCommand = {
  name: 'keys',
  summary: 'lists the records and SingleFlight keys of an operation',
  usage: `Usage: oncely keys <operation> (--redis <url> [--cluster] | --database <url>) [--json]

Lists the live records of an operation (ns:op:ver, or ns:op for every version): identity,
state, owner, expiry; and, given --redis, its SingleFlight keys (lease, cached result or error).
On Redis it SCANs every master of a cluster, never KEYS. Responses are never shown.

${CONNECTION_USAGE}`,
  async run(args, io) {
    const command = operatorCommandLineOf(args, io, this.usage);
    const target = oneTargetOf(command.positionals, this.usage, ['operation']);
    if (target.kind !== 'operation') return ExitCode.failed;
    const listing = await withConnection(command, io, ({ admin }) =>
      listOperation(admin, target.operation),
    );
    if (command.json) return writeJson(io, listing);
    io.out(renderListing(listing));
    return ExitCode.ok;
  },
};
