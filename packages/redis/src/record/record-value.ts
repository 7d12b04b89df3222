/**
 * The record as one Redis string (see `lua/shared/record-value.lua`), so that one `SET … NX GET`
 * both claims a record and reads the one already there:
 *
 * ```
 * <kind><fence> <leaseEnd> <createdAt> <retention> <digestLen> <serviceLen> <identityLen> <ownerToken>\n
 * <digest><service><identity>[<responseStatus> <bodyKind> <headersLen>\n<headers><body>]
 * ```
 *
 * `kind` is `p` (in progress) or `c` (completed, followed by the response); times are Redis
 * milliseconds, lengths bytes. Scripts write the first three numbers (they need Redis' clock) and
 * read only what their checks need; the store writes the rest and decodes what scripts return.
 */
import type { EncodedResponse } from '@oncely/core/adapter';

/** A record value, decoded. */
export interface RecordValue {
  readonly kind: 'in_progress' | 'completed';
  readonly fence: number;
  /** In progress: when the lease ends (Redis ms). Left as it was once completed. */
  readonly leaseEnd: number;
  /** When the current holder's begin ran (Redis ms); completion came no earlier. */
  readonly createdAt: number;
  readonly retentionMs: number;
  readonly digest: string;
  /** The claiming service; '' for none. */
  readonly service: string;
  readonly identity: string;
  readonly ownerToken: string;
  /** Completed: the stored response. */
  readonly response?: EncodedResponse;
}

const header = /^([pc])(\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) ([^\n]*)\n/;
const responseHeader = /^(\d+) ([a-z]+) (\d+)\n/;

/** What a begin writes after `<createdAt>`: everything but the times and the fence. */
export function recordTail(
  retentionMs: number,
  digest: string,
  service: string,
  identity: string,
  ownerToken: string,
): string {
  const lengths = [digest, service, identity].map((text) => Buffer.byteLength(text)).join(' ');
  return ` ${retentionMs} ${lengths} ${ownerToken}\n${digest}${service}${identity}`;
}

/** What a complete appends to the record: the response. */
export function responsePart(encoded: EncodedResponse): Buffer {
  const body = encoded.body;
  const head = `${encoded.status} ${encoded.bodyKind} ${Buffer.byteLength(encoded.headers)}\n${encoded.headers}`;
  if (body === null || body.byteLength === 0) return Buffer.from(head);
  return Buffer.concat([Buffer.from(head), body]);
}

/**
 * The header and names of a record value (not its response): what a listing needs, from a
 * prefix of the value; `undefined` when `value` is not one or stops short of the identity.
 */
export function decodeRecordHead(value: Buffer): Omit<RecordValue, 'response'> | undefined {
  return readHead(value)?.head;
}

function readHead(
  value: Buffer,
): { readonly head: Omit<RecordValue, 'response'>; readonly end: number } | undefined {
  const newline = value.indexOf(10);
  if (newline < 0) return undefined;
  const match = header.exec(value.toString('latin1', 0, newline + 1));
  if (!match) return undefined;
  const [, kind, fence, leaseEnd, createdAt, retention, digestLen, serviceLen, identityLen] = match;
  const at = newline + 1;
  const serviceAt = at + Number(digestLen);
  const identityAt = serviceAt + Number(serviceLen);
  const end = identityAt + Number(identityLen);
  if (end > value.length) return undefined;
  const head = {
    kind: kind === 'p' ? 'in_progress' : 'completed',
    fence: Number(fence),
    leaseEnd: Number(leaseEnd),
    createdAt: Number(createdAt),
    retentionMs: Number(retention),
    digest: value.toString('utf8', at, serviceAt),
    service: value.toString('utf8', serviceAt, identityAt),
    identity: value.toString('utf8', identityAt, end),
    ownerToken: match[9]!,
  } as const;
  return { head, end };
}

/**
 * Decodes a record value; `undefined` for bytes that are not one (a key written by something
 * else). Only the header is read as text: the body is copied out as bytes, since the reply may
 * be a view into the parser's shared pool.
 */
export function decodeRecordValue(value: Buffer): RecordValue | undefined {
  const read = readHead(value);
  if (read === undefined || read.head.kind === 'in_progress') return read?.head;
  const { head, end: at } = read;
  const responseEnd = value.indexOf(10, at);
  const response = responseHeader.exec(value.toString('latin1', at, responseEnd + 1));
  if (responseEnd < 0 || !response) return undefined;
  const headersEnd = responseEnd + 1 + Number(response[3]);
  return {
    ...head,
    response: {
      status: Number(response[1]),
      headers: value.toString('utf8', responseEnd + 1, headersEnd),
      bodyKind: response[2] as EncodedResponse['bodyKind'],
      body: new Uint8Array(value.subarray(headersEnd)),
    },
  };
}
