import { ExitCode, type CliCommand } from '../cli/cli-command.js';
import { CONNECTION_USAGE } from './operator-connection.js';
import {
  YES_USAGE,
  confirmed,
  oneTargetOf,
  operatorCommandLineOf,
  withConnection,
  writeJson,
} from './operator-command-line.js';

/** `oncely release <key>`: force-releases a key stuck in progress. */
export const releaseCommand: CliCommand = {
  name: 'release',
  summary: 'force-releases a key stuck in progress (asks first)',
  usage: `Usage: oncely release <key|identity> (--redis <url> [--cluster] | --database <url>) [--yes] [--json]

Frees a key stuck in progress so that the next request runs at once: the record (unless it is
completed: that is the proof the work happened) and, given --redis, the guard's lease and, for
a whole business key, its SingleFlight lease. The store moves the fence on, so the old holder
can no longer confirm and the next holder gets a higher fence. Asks for confirmation on a
terminal; elsewhere it refuses (exit 2) unless given --yes.

${YES_USAGE}
${CONNECTION_USAGE}`,
  async run(args, io) {
    const command = operatorCommandLineOf(args, io, this.usage, {
      yes: { type: 'boolean', short: 'y' },
    });
    const target = oneTargetOf(command.positionals, this.usage, ['key', 'identity']);
    const name = target.kind === 'operation' ? target.operation : target.identity;
    const question = `Force-release ${command.positionals[0]}? Its holder can no longer confirm and the next request runs again. [y/N]`;
    if (!(await confirmed(command, io, question))) return ExitCode.failed;
    const outcome = await withConnection(command, io, ({ admin }) =>
      admin.forceRelease(command.positionals[0]!),
    );
    if (command.json) {
      return writeJson(io, {
        target: target.kind,
        identity: name,
        record: outcome.kind,
        fence: outcome.kind === 'released' ? outcome.fence : null,
        leases: outcome.leases,
      });
    }
    const leases =
      outcome.leases.length === 0
        ? 'no coordinator lease'
        : `leases freed: ${outcome.leases.join(', ')}`;
    io.out(
      {
        released: `Released ${name}: the record held under fence ${outcome.kind === 'released' ? outcome.fence : ''} is taken away (the next holder gets a higher fence); ${leases}.\n`,
        completed: `${name} is completed: its record is left alone (purge deletes it); ${leases}.\n`,
        absent: `${name} has no record in progress; ${leases}.\n`,
      }[outcome.kind],
    );
    return ExitCode.ok;
  },
};
