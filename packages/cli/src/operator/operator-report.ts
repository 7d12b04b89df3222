import type { FlightEntry, FlightInspection, RecordInspection, RecordSummary } from '@oncely/core';

/**
 * The JSON the operator commands print with `--json`: these field names are stable, every field
 * is always present (`null` when it does not apply), times are ISO 8601 in UTC.
 */
export interface RecordJson {
  readonly identity: string;
  readonly keyHash: string;
  readonly state: 'in_progress' | 'completed';
  readonly owner: string | null;
  readonly expiresAt: string;
}

/** A SingleFlight key as `keys` and `inspect` print it with `--json`. */
export interface FlightJson {
  readonly key: string;
  readonly state: FlightInspection['kind'];
  readonly holder: string | null;
  readonly service: string | null;
  readonly fence: number | null;
  /** Until the lease, result or error runs out. */
  readonly remainingMs: number | null;
  /** Size of a cached result. */
  readonly bytes: number | null;
}

/** A record as `inspect` prints it with `--json`. */
export interface RecordInspectionJson {
  readonly identity: string;
  readonly keyHash: string;
  readonly state: RecordInspection['kind'];
  readonly owner: string | null;
  readonly fence: number | null;
  readonly fingerprint: string | null;
  /** When the holder's lease runs out (in progress). */
  readonly leaseExpiresAt: string | null;
  /** When a completed record stops being replayed. */
  readonly expiresAt: string | null;
  /** Until `leaseExpiresAt` or `expiresAt`. */
  readonly ttlMs: number | null;
  readonly response: {
    readonly status: number;
    readonly bodyKind: string;
    readonly bodyBytes: number;
    /** Only with `--show-body`. */
    readonly headers?: Readonly<Record<string, string>>;
    /** Only with `--show-body`: JSON as is, bytes as base64. */
    readonly body?: unknown;
  } | null;
}

export function recordJson(record: RecordSummary): RecordJson {
  return {
    identity: record.identity,
    keyHash: record.keyHash,
    state: record.kind,
    owner: record.owner ?? null,
    expiresAt: record.expiresAt.toISOString(),
  };
}

export function flightJson(entry: FlightEntry): FlightJson {
  const { key, inspection } = entry;
  const base = { key, state: inspection.kind, holder: null, service: null, fence: null };
  switch (inspection.kind) {
    case 'absent':
      return { ...base, remainingMs: null, bytes: null };
    case 'leading':
      return {
        ...base,
        holder: inspection.holder,
        service: inspection.service ?? null,
        fence: inspection.fence ?? null,
        remainingMs: inspection.leaseRemainingMs,
        bytes: null,
      };
    case 'cached':
      return {
        ...base,
        service: inspection.service ?? null,
        remainingMs: inspection.remainingMs,
        bytes: inspection.bytes,
      };
    case 'failed':
      return {
        ...base,
        service: inspection.service ?? null,
        remainingMs: inspection.remainingMs,
        bytes: null,
      };
  }
}

export function recordInspectionJson(
  identity: string,
  inspection: RecordInspection,
  now: number,
  showBody: boolean,
): RecordInspectionJson {
  const none = {
    identity,
    keyHash: inspection.keyHash,
    state: inspection.kind,
    owner: null,
    fence: null,
    fingerprint: null,
    leaseExpiresAt: null,
    expiresAt: null,
    ttlMs: null,
    response: null,
  };
  if (inspection.kind === 'absent') return none;
  const held = {
    ...none,
    owner: inspection.owner ?? null,
    fence: inspection.fence,
    fingerprint: inspection.fingerprint,
  };
  if (inspection.kind === 'in_progress') {
    const leaseExpiresAt = inspection.leaseExpiresAt;
    return {
      ...held,
      leaseExpiresAt: leaseExpiresAt.toISOString(),
      ttlMs: leaseExpiresAt.getTime() - now,
    };
  }
  const { status, headers, body } = inspection.response;
  return {
    ...held,
    expiresAt: inspection.expiresAt.toISOString(),
    ttlMs: inspection.expiresAt.getTime() - now,
    response: {
      status,
      bodyKind: body.kind,
      bodyBytes: bodyBytesOf(body),
      ...(showBody && { headers, body: bodyJsonOf(body) }),
    },
  };
}

type Body = Extract<RecordInspection, { kind: 'completed' }>['response']['body'];

function bodyBytesOf(body: Body): number {
  if (body.kind === 'empty') return 0;
  if (body.kind === 'bytes') return body.value.byteLength;
  return Buffer.byteLength(JSON.stringify(body.value) ?? '');
}

function bodyJsonOf(body: Body): unknown {
  if (body.kind === 'empty') return null;
  if (body.kind === 'bytes') return Buffer.from(body.value).toString('base64');
  return body.value;
}

/** Columns padded to their widest cell, for people; `--json` is for scripts. */
export function renderTable(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ');
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** A duration as people read it: `850ms`, `12s`, `4m 10s`, `2h 5m`. */
export function durationText(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1_000) return `${Math.max(0, ms)}ms`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** The rows of a flights table. */
export function flightRows(flights: readonly FlightJson[]): string[][] {
  return flights.map((flight) => [
    flight.key,
    flight.state,
    flight.service ?? flight.holder ?? '-',
    flight.fence === null ? '-' : String(flight.fence),
    durationText(flight.remainingMs),
    flight.bytes === null ? '-' : String(flight.bytes),
  ]);
}

/** The header of a flights table. */
export const FLIGHT_COLUMNS = ['KEY', 'STATE', 'SERVICE/HOLDER', 'FENCE', 'REMAINING', 'BYTES'];
