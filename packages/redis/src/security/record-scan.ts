import type { Cluster, Redis } from 'ioredis';
import { recordKeyHashOf } from '../record/record-key.js';
import { decodeRecordHead } from '../record/record-value.js';

/**
 * One live record as a listing reports it (the shape of `RecordSummary` in `@oncely/core`'s
 * record listing port).
 */
export interface RecordSummary {
  /** The record identity (the business key without its fingerprint). */
  readonly identity: string;
  /** SHA-256 hex of the identity: the key's hash tag. */
  readonly keyHash: string;
  /** Claimed and running, or completed with a stored response. */
  readonly kind: 'in_progress' | 'completed';
  /** The claiming service, when the record carries one. */
  readonly owner?: string;
  /** When the store drops the record (lease end + retention in progress, retention end completed). */
  readonly expiresAt: Date;
}

/** Bytes read first of each record: its header and names, rarely its whole response. */
const headBytes = 4096;

/**
 * The live records whose keys match `pattern`, on every master of a cluster or on the one server:
 * `SCAN cursor MATCH pattern COUNT batchSize` per node, then per batch one pipeline reading the
 * node's clock and each record's head and remaining TTL. Abandoned records (lease run out in
 * progress, which the next begin takes over) and keys expired meanwhile are left out.
 */
export async function* scanRecords(
  client: Redis | Cluster,
  pattern: string,
  batchSize: number,
): AsyncGenerator<RecordSummary> {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`batchSize must be a positive whole number, got ${batchSize}.`);
  }
  const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', batchSize);
      cursor = next;
      if (keys.length > 0) yield* await summaries(node, keys);
    } while (cursor !== '0');
  }
}

async function summaries(node: Redis, keys: readonly string[]): Promise<RecordSummary[]> {
  const pipeline = node.pipeline().time();
  for (const key of keys) pipeline.getrangeBuffer(key, 0, headBytes - 1).pttl(key);
  const replies = (await pipeline.exec()) ?? [];
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0]!;
  const [seconds, micros] = replies[0]![1] as [string, string];
  const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const found: RecordSummary[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    let value = replies[1 + 2 * i]![1] as Buffer;
    const pttl = replies[2 + 2 * i]![1] as number;
    if (pttl < 0 || value.length === 0) continue;
    let head = decodeRecordHead(value);
    if (head === undefined && value.length === headBytes) {
      value = (await node.getBuffer(key)) ?? Buffer.alloc(0);
      head = decodeRecordHead(value);
    }
    const keyHash = recordKeyHashOf(key);
    if (head === undefined || keyHash === undefined) continue;
    if (head.kind === 'in_progress' && head.leaseEnd <= nowMs) continue;
    found.push({
      identity: head.identity,
      keyHash,
      kind: head.kind,
      ...(head.service === '' ? {} : { owner: head.service }),
      expiresAt: new Date(nowMs + pttl),
    });
  }
  return found;
}
