import type { Cluster, Redis } from 'ioredis';
import { bindLuaScript, loadLuaScript } from '../lua-scripts.js';

const recordScripts = {
  begin: loadLuaScript('record-begin-1.lua'),
  complete: loadLuaScript('record-complete-1.lua'),
  release: loadLuaScript('record-release-1.lua'),
  renew: loadLuaScript('record-renew-1.lua'),
} as const;

/** The begin script's reply: bulk strings as Buffers (binary bodies), integers as numbers. */
export type BeginReply = [Buffer, ...(Buffer | number)[]];

/** The record scripts bound to one client; each call is one atomic round trip. */
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

/** Defines the scripts on `client` (once per client) and returns them bound to it. */
export function defineRecordScripts(client: Redis | Cluster): RecordScripts {
  return {
    // The Buffer variant, so a replayed binary body arrives untouched.
    begin: bindLuaScript(client, recordScripts.begin, 'buffers'),
    complete: bindLuaScript(client, recordScripts.complete),
    release: bindLuaScript(client, recordScripts.release),
    renew: bindLuaScript(client, recordScripts.renew),
  } as RecordScripts;
}
