/** The scripts of the quota (`lua/quota-*.lua`) and of operator access to records. */
import { luaScriptSet } from '../scripts/lua-scripts.js';

/** The quota scripts bound to one client. */
export interface QuotaScripts {
  take(countedKey: string, identityHash: string, limit: number, ttlMs: number): Promise<number>;
  giveBack(countedKey: string, identityHash: string): Promise<number>;
}

/** The operator's record scripts bound to one client. */
export interface RecordAdminScripts {
  inspect(recordKey: string): Promise<[number, number?, Buffer?]>;
  forceRelease(recordKey: string): Promise<[string, number?]>;
}

/** Defines the quota scripts on a client (once per client) and returns them bound to it. */
export const defineQuotaScripts = luaScriptSet<QuotaScripts>({
  take: 'quota-take-1.lua',
  giveBack: 'quota-give-back-1.lua',
});

/** Defines the operator's scripts on a client (once per client) and returns them bound to it. */
export const defineRecordAdminScripts = luaScriptSet<RecordAdminScripts>({
  // Buffer replies: a stored body is binary.
  inspect: { file: 'record-inspect-1.lua', replies: 'buffers' },
  forceRelease: 'record-force-release-1.lua',
});
