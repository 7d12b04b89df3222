/** The idempotency record scripts (`lua/record-*.lua`): each call is one atomic round trip. */
import { luaScriptSet } from '../scripts/lua-scripts.js';

/** The begin script's reply: bulk strings as Buffers (binary bodies), integers as numbers. */
export type BeginReply = [Buffer, ...(Buffer | number)[]];

/** The record scripts the store runs, bound to one client. */
export interface RecordScripts {
  begin(
    recordKey: string,
    identity: string,
    digest: string,
    ownerToken: string,
    leaseTtlMs: number,
    retentionMs: number,
  ): Promise<BeginReply>;
  complete(
    recordKey: string,
    ownerToken: string,
    fence: string,
    status: string,
    headers: string,
    bodyKind: string,
    body: Buffer,
  ): Promise<number>;
  release(recordKey: string, ownerToken: string, fence: string): Promise<number>;
  renew(recordKey: string, ownerToken: string, fence: string, leaseTtlMs: number): Promise<number>;
}

/** Defines the scripts on a client (once per client) and returns them bound to it. */
export const defineRecordScripts = luaScriptSet<RecordScripts>({
  // Buffer replies, so a replayed binary body arrives untouched.
  begin: { file: 'record-begin-1.lua', replies: 'buffers' },
  complete: 'record-complete-1.lua',
  release: 'record-release-1.lua',
  renew: 'record-renew-1.lua',
});
