import { ExitCode, UsageError, type CliCommand } from '../cli/cli-command.js';
import { CONNECTION_USAGE } from './operator-connection.js';
import {
  YES_USAGE,
  confirmed,
  oneTargetOf,
  operatorCommandLineOf,
  withConnection,
  writeJson,
} from './operator-command-line.js';

/** `oncely purge --expired | <key|identity|operation>`: deletes records. */
export const purgeCommand: CliCommand = {
  name: 'purge',
  summary: 'deletes expired records, or the records of a key or operation (asks first)',
  usage: `Usage: oncely purge --expired (--redis <url> [--cluster] | --database <url>) [--json]
       oncely purge <key|identity|operation> (--redis <url> [--cluster] | --database <url>) [--yes] [--json]

--expired deletes the expired records of a database in batches (Redis expires its records
itself: nothing to do there). With a key, an identity or an operation it deletes their records
whatever their state, and, given --redis, the cached SingleFlight results and errors of the
whole key or of every key of the operation, so that the next request runs again. Running
SingleFlight leases are left to release. Asks for confirmation on a terminal; elsewhere it
refuses (exit 2) unless given --yes.

  --expired           delete expired records only
${YES_USAGE}
${CONNECTION_USAGE}`,
  async run(args, io) {
    const command = operatorCommandLineOf(args, io, this.usage, {
      expired: { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
    });
    if (command.flags['expired']) {
      if (command.positionals.length > 0) {
        throw new UsageError('Give either --expired or a target, not both.', this.usage);
      }
      return withConnection(command, io, async ({ admin, records }) => {
        if (records === 'redis') {
          const note =
            'Redis expires records itself (every record key has a TTL): nothing to purge.';
          return command.json
            ? writeJson(io, { expired: true, store: 'redis', purged: 0, note })
            : (io.out(`${note}\n`), ExitCode.ok);
        }
        const purged = await admin.purgeExpired();
        if (command.json) return writeJson(io, { expired: true, store: 'database', purged });
        io.out(`Deleted ${purged} expired record${purged === 1 ? '' : 's'}.\n`);
        return ExitCode.ok;
      });
    }
    const target = oneTargetOf(command.positionals, this.usage);
    const text = command.positionals[0]!;
    const scope = target.kind === 'operation' ? `every record of ${text}` : `the record of ${text}`;
    const question = `Delete ${scope}, whatever its state, and cached SingleFlight results? The next request runs again. [y/N]`;
    if (!(await confirmed(command, io, question))) return ExitCode.failed;
    const outcome = await withConnection(command, io, ({ admin }) => admin.purge(text));
    if (command.json) return writeJson(io, { target: target.kind, name: text, ...outcome });
    io.out(
      `Deleted ${outcome.records} record${outcome.records === 1 ? '' : 's'} and ${outcome.flights} cached SingleFlight outcome${outcome.flights === 1 ? '' : 's'} of ${text}.\n`,
    );
    return ExitCode.ok;
  },
};
