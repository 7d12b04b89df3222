import type { BeginOptions, BeginOutcome } from '@oncely/core';
import { recordKeyHash } from '@oncely/core/adapter';
import type { RecordConnection } from './record-connection.js';
import { liveAnswer, type RecordRow } from './record-row.js';

/** Reads of the previous rows one `begin` may spend while their holders keep changing them. */
const maxReads = 8;

/**
 * What the records of a route's previous versions answer a `begin` that has just claimed its own
 * row: the first live one in `previousIdentities` order (a replay names it), or `undefined` when
 * none is live. A row abandoned in progress is deleted, named by its holder's owner and fence,
 * so that holder can no longer confirm once the new claim runs the work; when the holder
 * completed or renewed it meanwhile, the rows are read again.
 *
 * The claim comes first, in its own auto-committed statement, and this read after it: a begin
 * listing the claimed identity as previous, doing the same, either sees the claim or was seen by
 * it, so the two never both run. Inside one transaction neither would see the other's
 * uncommitted row, and an absent row cannot be locked (PostgreSQL has no gap locks), hence the
 * separate statements.
 */
export async function previousRecordsAnswer(
  connection: RecordConnection,
  previousIdentities: readonly string[],
  digest: string,
  options: BeginOptions,
  now: () => number,
): Promise<BeginOutcome | undefined> {
  const { statements } = connection;
  const hashes = previousIdentities.map(recordKeyHash);
  for (let read = 0; read < maxReads; read += 1) {
    const rows = (await connection.execute(statements.selectMany(hashes.length), hashes))
      .records as (RecordRow & { key_hash: string })[];
    const answer = await answerOf(connection, rows, hashes, previousIdentities, digest, {
      options,
      now: now(),
    });
    if (answer !== 'read again') return answer;
  }
  // Holders keep changing these rows: somebody is actively working on this request.
  return { kind: 'in_progress', retryAfterMs: 1_000 };
}

async function answerOf(
  connection: RecordConnection,
  rows: readonly (RecordRow & { key_hash: string })[],
  hashes: readonly string[],
  previousIdentities: readonly string[],
  digest: string,
  { options, now }: { options: BeginOptions; now: number },
): Promise<BeginOutcome | undefined | 'read again'> {
  for (const [index, keyHash] of hashes.entries()) {
    const row = rows.find((candidate) => candidate.key_hash === keyHash);
    if (!row) continue;
    const answer = liveAnswer(row, digest, now, options);
    if (answer?.kind === 'replay' || answer?.kind === 'foreign_owner') {
      return { ...answer, previousIdentity: previousIdentities[index] as string };
    }
    if (answer) return answer;
    if (row.status !== 'in_progress') continue;
    const deleted = await connection.execute(connection.statements.deleteAbandoned, [
      keyHash,
      row.owner_token,
      Number(row.fence),
      now,
    ]);
    if (deleted.affected !== 1) return 'read again';
  }
  return undefined;
}
