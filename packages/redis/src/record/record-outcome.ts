import type { BeginOptions, BeginOutcome, StoredResponse } from '@oncely/core';
import { decodeStoredResponse, foreignOwnerOf, type EncodedResponse } from '@oncely/core/adapter';
import type { BeginReply } from './record-scripts.js';
import { decodeRecordValue, type RecordValue } from './record-value.js';

/** A begin or previous script's answer other than `acquired`, and the live record behind it. */
export interface RecordAnswer {
  readonly outcome: BeginOutcome;
  /** The completed record the answer came from. */
  readonly completed?: RecordValue;
  /** Redis' clock (ms) when the script read it. */
  readonly nowMs?: number;
}

/**
 * What a live record answers a begin: it comes back whole (the scripts only decide whether it is
 * live) and is judged here, in the order every store follows: foreign owner, then digest, then
 * state. A replay or foreign owner names `previousIdentity` when a previous version's record
 * answered.
 */
export function answerOf(
  reply: BeginReply,
  previousIdentity: string | undefined,
  options: Pick<BeginOptions, 'owner' | 'ownerAliases' | 'shared'>,
  digest: string,
): RecordAnswer {
  const kind = reply[0].toString('latin1');
  if (kind !== 'record') throw new Error(`Unexpected reply "${kind}" from a record begin script.`);
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
