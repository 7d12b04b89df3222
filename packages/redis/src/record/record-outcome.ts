import type { BeginOptions, BeginOutcome, StoredResponse } from '@oncely/core';
import { decodeStoredResponse, foreignOwnerOf, type EncodedResponse } from '@oncely/core/adapter';
import type { BeginReply } from './record-scripts.js';
import { decodeRecordValue, type RecordValue } from './record-value.js';

/** A begin or previous script's answer other than `acquired`, and the live record behind it. */
export interface RecordAnswer {
  readonly outcome: BeginOutcome;
  /** The completed record the answer came from, when it has the current layout. */
  readonly completed?: RecordValue;
  /** Redis' clock (ms) when the script read it. */
  readonly nowMs?: number;
}

/**
 * What a live record answers a begin: a record of the current layout comes back whole (the
 * scripts only decide whether it is live) and is judged here, in the order every store follows:
 * foreign owner, then digest, then state. A record of the previous layout comes back already
 * judged by `record-answer.lua`. A replay or foreign owner names `previousIdentity` when a
 * previous version's record answered.
 */
export function answerOf(
  reply: BeginReply,
  previousIdentity: string | undefined,
  options: Pick<BeginOptions, 'owner' | 'ownerAliases' | 'shared'>,
  digest: string,
): RecordAnswer {
  const kind = reply[0].toString('latin1');
  switch (kind) {
    case 'record': {
      const nowMs = Number(String(reply[1]));
      const record = decodeRecordValue(reply[2] as Buffer);
      if (record === undefined) {
        throw new Error(
          'A record key holds a value oncely did not write; a key under this keyPrefix was written by something else. Give the store a keyPrefix nothing else uses.',
        );
      }
      const owner = foreignOwnerOf(record.service, options);
      if (owner !== undefined) return { outcome: named({ kind: 'foreign_owner', owner }) };
      if (record.kind === 'in_progress') {
        if (record.digest !== digest) return { outcome: { kind: 'mismatch' } };
        return { outcome: { kind: 'in_progress', retryAfterMs: record.leaseEnd - nowMs } };
      }
      const outcome: BeginOutcome =
        record.digest === digest
          ? named({ kind: 'replay', response: responseOf(record.response!) })
          : { kind: 'mismatch' };
      return { outcome, completed: record, nowMs };
    }
    case 'replay':
      return { outcome: named({ kind, response: legacyReplay(reply) }) };
    case 'mismatch':
      return { outcome: { kind } };
    case 'foreign_owner':
      return { outcome: named({ kind, owner: (reply[1] as Buffer).toString('utf8') }) };
    case 'in_progress':
      return { outcome: { kind, retryAfterMs: reply[1] as number } };
    default:
      throw new Error(`Unexpected reply "${kind}" from a record begin script.`);
  }

  function named<Outcome extends BeginOutcome>(outcome: Outcome): Outcome {
    return previousIdentity === undefined ? outcome : { ...outcome, previousIdentity };
  }
}

/** A stored response, decoded afresh: every replay gets its own objects and bytes. */
export function responseOf(encoded: EncodedResponse): StoredResponse {
  return decodeStoredResponse(
    encoded.body === null ? encoded : { ...encoded, body: new Uint8Array(encoded.body) },
  );
}

/** A replay from a record of the previous layout: its hash fields, as record-answer.lua sends. */
function legacyReplay(reply: BeginReply): StoredResponse {
  const [, status, headers, bodyKind, body] = reply as Buffer[];
  return decodeStoredResponse({
    status: Number(status!.toString('latin1')),
    headers: headers!.toString('utf8'),
    bodyKind: bodyKind!.toString('latin1') as StoredResponse['body']['kind'],
    // A copy: the reply may be a view into the parser's shared pool or a larger socket chunk.
    body: new Uint8Array(body!),
  });
}
