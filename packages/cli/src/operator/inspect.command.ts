import { ExitCode, type CliCommand, type CliIo } from '../cli/cli-command.js';
import { CONNECTION_USAGE } from './operator-connection.js';
import {
  oneTargetOf,
  operatorCommandLineOf,
  withConnection,
  writeJson,
} from './operator-command-line.js';
import { listOperation, renderListing } from './operation-listing.js';
import {
  FLIGHT_COLUMNS,
  durationText,
  flightJson,
  flightRows,
  recordInspectionJson,
  renderTable,
  type FlightJson,
  type RecordInspectionJson,
} from './operator-report.js';

/** What `inspect` found for a key or identity. */
interface KeyInspection {
  readonly target: 'key' | 'identity';
  /** The whole business key, when one was given. */
  readonly key: string | null;
  readonly record: RecordInspectionJson;
  /** The SingleFlight state of the whole key; `null` for an identity or without `--redis`. */
  readonly flight: FlightJson | null;
}

/** `oncely inspect <key|identity|operation>`: what a key holds, never its body unless asked. */
export const inspectCommand: CliCommand = {
  name: 'inspect',
  summary: 'shows what a key, an identity or an operation holds',
  usage: `Usage: oncely inspect <key|identity|operation> (--redis <url> [--cluster] | --database <url>)
                      [--show-body] [--json]

For a business key (ns:op:ver:scope:target:fingerprint) or an identity (ns:op:ver:scope:target):
the record's state, owner (service), fence, expiry and time left, and the response's status and
body size; for a whole business key also its SingleFlight state (lease holder and fence, cached
result or error) when --redis is given. For an operation (ns:op:ver, or ns:op): what keys lists.

  --show-body         also print the stored response's headers and body (may hold personal data)
${CONNECTION_USAGE}`,
  async run(args, io) {
    const command = operatorCommandLineOf(args, io, this.usage, {
      'show-body': { type: 'boolean' },
    });
    const target = oneTargetOf(command.positionals, this.usage);
    const showBody = command.flags['show-body'] === true;
    return withConnection(command, io, async ({ admin }) => {
      if (target.kind === 'operation') {
        const listing = await listOperation(admin, target.operation);
        if (command.json) return writeJson(io, { target: 'operation', ...listing });
        io.out(renderListing(listing));
        return ExitCode.ok;
      }
      const key = target.kind === 'key' ? target.key : null;
      const [record, flight] = await Promise.all([
        admin.inspect(target.identity),
        key !== null && admin.inspectsFlights ? admin.inspectFlight(key) : undefined,
      ]);
      const inspection: KeyInspection = {
        target: target.kind,
        key,
        record: recordInspectionJson(target.identity, record, Date.now(), showBody),
        flight:
          key !== null && flight !== undefined ? flightJson({ key, inspection: flight }) : null,
      };
      if (command.json) return writeJson(io, inspection);
      writeInspection(io, inspection, admin.inspectsFlights);
      return ExitCode.ok;
    });
  },
};

function writeInspection(io: CliIo, inspection: KeyInspection, inspectsFlights: boolean): void {
  const { record } = inspection;
  const rows: Array<[string, string]> = [
    ['identity', record.identity],
    ['key hash', record.keyHash],
    ['state', record.state === 'absent' ? absentState(inspection.flight) : record.state],
  ];
  if (record.state !== 'absent') {
    rows.push(['owner', record.owner ?? '- (none stamped)'], ['fence', String(record.fence)]);
    const until = record.leaseExpiresAt ?? record.expiresAt;
    const what = record.state === 'in_progress' ? 'lease expires' : 'expires';
    rows.push([what, `${until} (in ${durationText(record.ttlMs)})`]);
    rows.push(['fingerprint', record.fingerprint ?? '-']);
  }
  const { response } = record;
  if (response) {
    rows.push([
      'response',
      `${response.status}, ${response.bodyKind} body of ${response.bodyBytes} bytes`,
    ]);
    if (response.headers) rows.push(['headers', JSON.stringify(response.headers)]);
    if ('body' in response) rows.push(['body', JSON.stringify(response.body)]);
  }
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  let text = rows.map(([name, value]) => `${`${name}:`.padEnd(width)}${value}`).join('\n') + '\n';
  if (inspection.key !== null) {
    text += inspection.flight
      ? `\nSingleFlight state of ${inspection.key}:\n${renderTable(FLIGHT_COLUMNS, flightRows([inspection.flight]))}`
      : inspectsFlights
        ? ''
        : '\nSingleFlight state not shown: give --redis for the coordinator.\n';
  }
  io.out(text);
}

/**
 * A key without a durable record runs on its next request only when the coordinator holds
 * nothing for it either: a cached SingleFlight outcome answers it, a running flight holds it.
 */
function absentState(flight: FlightJson | null): string {
  const remaining = `for another ${durationText(flight?.remainingMs ?? null)}`;
  switch (flight?.state) {
    case 'cached':
      return `absent (no durable record); the cached SingleFlight result answers the next request ${remaining}`;
    case 'failed':
      return `absent (no durable record); the cached SingleFlight error answers the next request ${remaining}`;
    case 'leading':
      return `absent (no durable record); a running SingleFlight call holds the key (its lease ${remaining}): the next request waits for it or is refused`;
    default:
      return 'absent (no live record: the next request runs)';
  }
}
