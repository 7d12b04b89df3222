/** The scripts of the quota and the operator access (`lua/quota-*.lua`, record inspection). */
import { luaScriptSet } from '../scripts/lua-scripts.js';

/** The quota and operator scripts bound to one client. */
export interface SecurityScripts {
  quotaTake(counterKey: string, limit: number, ttlMs: number): Promise<number>;
  quotaGiveBack(counterKey: string): Promise<number>;
  recordInspect(recordKey: string): Promise<(Buffer | number)[]>;
  recordForceRelease(recordKey: string): Promise<[string, number?]>;
}

/** Defines the scripts on a client (once per client) and returns them bound to it. */
export const defineSecurityScripts = luaScriptSet<SecurityScripts>({
  quotaTake: 'quota-take-1.lua',
  quotaGiveBack: 'quota-give-back-1.lua',
  // Buffer replies: a stored body is binary.
  recordInspect: { file: 'record-inspect-1.lua', replies: 'buffers' },
  recordForceRelease: 'record-force-release-1.lua',
});
