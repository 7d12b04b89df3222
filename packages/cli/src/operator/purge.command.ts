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
import { NO_REDIS_OPTION, NO_REDIS_USAGE, coordinatorReachOf } from './replay-cache-reach.js';

/** `oncely purge --expired | <key|identity|operation>`: deletes records. */
export const purgeCommand: CliCommand = {
  name: 'purge',
  summary: 'deletes expired records, or the records of a key or operation (asks first)',
  usage: `Usage: oncely purge --expired (--redis <url> [--cluster] | --database <url>) [--json]
       oncely purge <key|identity|operation> (--redis <url> [--cluster] | --database <url> (--redis <url> | --no-redis)) [--yes] [--json]

--expired deletes the expired records of a database in batches (Redis expires its records
itself: nothing to do there). With a key, an identity or an operation it deletes every layer
that could answer the next request: their records whatever their state, the cached replays of
the idempotency guard and the cached SingleFlight results and errors (of the whole key, or of
every key of the operation), and, by notice, every app process's near-cached copies; so the next
request runs again. With --database the coordinator is named with --redis, or --no-redis says
the app has none: its in-process coordinator is out of reach, and may replay for up to its
replayCacheTtl (60 s by default). Running SingleFlight leases are left to release. Asks for
confirmation on a terminal; elsewhere it refuses (exit 2) unless given --yes.

  --expired           delete expired records only
${NO_REDIS_USAGE}
${YES_USAGE}
${CONNECTION_USAGE}`,
  async run(args, io) {
    const command = operatorCommandLineOf(args, io, this.usage, {
      expired: { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
      ...NO_REDIS_OPTION,
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
    const reach = coordinatorReachOf(command, this.usage, 'its cached replay');
    const scope = target.kind === 'operation' ? `every record of ${text}` : `the record of ${text}`;
    const question =
      reach === 'redis'
        ? `Delete ${scope}, whatever its state, with its cached replays and SingleFlight results? The next request runs again. [y/N]`
        : `Delete ${scope}, whatever its state? ${IN_PROCESS_REPLAYS} [y/N]`;
    if (!(await confirmed(command, io, question))) return ExitCode.failed;
    const outcome = await withConnection(command, io, ({ admin }) => admin.purge(text));
    const records = `${outcome.records} record${outcome.records === 1 ? '' : 's'}`;
    if (reach === 'in-process') {
      if (command.json) {
        return writeJson(io, {
          target: target.kind,
          name: text,
          records: outcome.records,
          flights: null,
        });
      }
      io.out(`Deleted ${records} of ${text}. ${IN_PROCESS_REPLAYS}\n`);
      return ExitCode.ok;
    }
    if (command.json) return writeJson(io, { target: target.kind, name: text, ...outcome });
    io.out(
      `Deleted ${records} and ${outcome.flights} cached replay or SingleFlight outcome${outcome.flights === 1 ? '' : 's'} of ${text}: the next request runs again.\n`,
    );
    return ExitCode.ok;
  },
};

/** What `--no-redis` leaves: the in-process coordinator's cached replays, out of reach. */
const IN_PROCESS_REPLAYS =
  "The app's in-process coordinator is out of reach: it may still replay for up to its replayCacheTtl (60 s by default), or until the app restarts.";
