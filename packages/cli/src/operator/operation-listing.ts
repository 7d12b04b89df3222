import type { OncelyAdmin } from '@oncely/core';
import {
  FLIGHT_COLUMNS,
  flightJson,
  flightRows,
  recordJson,
  renderTable,
  type FlightJson,
  type RecordJson,
} from './operator-report.js';

/** What `keys` (and `inspect` of an operation) found. */
export interface OperationListing {
  readonly operation: string;
  /** Live records, by identity. */
  readonly records: RecordJson[];
  /** SingleFlight keys, by key; `null` when no coordinator (`--redis`) was given. */
  readonly flights: FlightJson[] | null;
}

/** Lists the records and SingleFlight keys of `operation`, each sorted. */
export async function listOperation(
  admin: OncelyAdmin,
  operation: string,
): Promise<OperationListing> {
  const records: RecordJson[] = [];
  for await (const record of admin.listRecords(operation)) records.push(recordJson(record));
  records.sort((a, b) => compare(a.identity, b.identity));
  let flights: FlightJson[] | null = null;
  if (admin.inspectsFlights) {
    flights = [];
    for await (const entry of admin.listFlights(operation)) flights.push(flightJson(entry));
    flights.sort((a, b) => compare(a.key, b.key));
  }
  return { operation, records, flights };
}

/** The listing as tables for people. */
export function renderListing(listing: OperationListing): string {
  const { operation, records, flights } = listing;
  const parts = [
    records.length === 0
      ? `No records of ${operation}.\n`
      : `Records of ${operation} (${records.length}):\n` +
        renderTable(
          ['IDENTITY', 'STATE', 'OWNER', 'EXPIRES'],
          records.map((record) => [
            record.identity,
            record.state,
            record.owner ?? '-',
            record.expiresAt,
          ]),
        ),
  ];
  if (flights === null) {
    parts.push('SingleFlight keys not listed: give --redis for the coordinator.\n');
  } else if (flights.length === 0) {
    parts.push(`No SingleFlight keys of ${operation}.\n`);
  } else {
    parts.push(
      `SingleFlight keys of ${operation} (${flights.length}):\n` +
        renderTable(FLIGHT_COLUMNS, flightRows(flights)),
    );
  }
  return parts.join('\n');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
