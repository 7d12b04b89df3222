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
import { NO_REDIS_OPTION, NO_REDIS_USAGE, coordinatorReachOf } from './replay-cache-reach.js';

/** `oncely release <key>`: force-releases a key stuck in progress. */
export const releaseCommand: CliCommand = {
  name: 'release',
  summary: 'force-releases a key stuck in progress (asks first)',
  usage: `Usage: oncely release <key|identity> (--redis <url> [--cluster] | --database <url> (--redis <url> | --no-redis)) [--yes] [--json]

Frees a key stuck in progress so that the next request runs at once: the record (unless it is
completed: that is the proof the work happened), the guard's lease and, for a whole business
key, its SingleFlight lease. The store moves the fence on, so the old holder can no longer
confirm and the next holder gets a higher fence. With --database the coordinator holding the
leases is named with --redis, or --no-redis says the app has none: its in-process leases are
out of reach, and a retry may meet 409 until the old handler ends. Asks for confirmation on a
terminal; elsewhere it refuses (exit 2) unless given --yes.

${NO_REDIS_USAGE}
${YES_USAGE}
${CONNECTION_USAGE}`,
  async run(args, io) {
    const command = operatorCommandLineOf(args, io, this.usage, {
      yes: { type: 'boolean', short: 'y' },
      ...NO_REDIS_OPTION,
    });
    const target = oneTargetOf(command.positionals, this.usage, ['key', 'identity']);
    const name = target.kind === 'operation' ? target.operation : target.identity;
    const reach = coordinatorReachOf(command, this.usage, 'its guard lease');
    const question = `Force-release ${command.positionals[0]}? Its holder can no longer confirm and ${reach === 'redis' ? 'the next request runs again' : IN_PROCESS_LEASES}. [y/N]`;
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
        leases: reach === 'redis' ? outcome.leases : null,
      });
    }
    const leases =
      reach === 'in-process'
        ? IN_PROCESS_LEASES
        : outcome.leases.length === 0
          ? 'no coordinator lease was held'
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

/** What `--no-redis` leaves: the in-process coordinator's leases, out of reach. */
const IN_PROCESS_LEASES =
  "the app's in-process coordinator is out of reach: a retry may meet 409 while the old handler still runs there";
