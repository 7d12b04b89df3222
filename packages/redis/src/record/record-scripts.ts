/** The idempotency record scripts (`lua/record-*.lua`): each call is one atomic round trip. */
import { luaScriptSet } from '../scripts/lua-scripts.js';

/** A begin or previous script's reply: bulk strings as Buffers (binary bodies), integers as numbers. */
export type BeginReply = [Buffer, ...(Buffer | number)[]];

/** The record scripts the store runs, bound to one client. */
export interface RecordScripts {
  /**
   * `numberOfKeys` record keys follow (the record to claim first, then the same request's under
   * previous versions); then the record tail, lease TTL and retention.
   */
  begin(numberOfKeys: number, ...keysThenArguments: (string | number)[]): Promise<BeginReply>;
  /** What a previous version's record answers, on a Cluster (another slot than the claim's). */
  previous(recordKey: string): Promise<BeginReply>;
  complete(recordKey: string, ownerToken: string, fence: string, response: Buffer): Promise<number>;
  release(recordKey: string, ownerToken: string, fence: string): Promise<number>;
  renew(recordKey: string, ownerToken: string, fence: string, leaseTtlMs: number): Promise<number>;
}

/** Defines the scripts on a client (once per client) and returns them bound to it. */
export const defineRecordScripts = luaScriptSet<RecordScripts>({
  // Buffer replies, so a replayed binary body arrives untouched.
  begin: { file: 'record-begin-n.lua', replies: 'buffers' },
  previous: { file: 'record-previous-1.lua', replies: 'buffers' },
  complete: 'record-complete-1.lua',
  release: 'record-release-1.lua',
  renew: 'record-renew-1.lua',
});
