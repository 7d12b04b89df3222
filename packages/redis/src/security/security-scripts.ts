import type { Cluster, Redis } from 'ioredis';
import { bindLuaScript, loadLuaScript } from '../lua-scripts.js';

const securityScripts = {
  quotaTake: loadLuaScript('quota-take-1.lua'),
  quotaGiveBack: loadLuaScript('quota-give-back-1.lua'),
  recordInspect: loadLuaScript('record-inspect-1.lua'),
  recordForceRelease: loadLuaScript('record-force-release-1.lua'),
} as const;

export interface SecurityScripts {
  quotaTake(counterKey: string, limit: number, ttlMs: number): Promise<number>;
  quotaGiveBack(counterKey: string): Promise<number>;
  /** Buffer replies: a stored body is binary. */
  recordInspect(recordKey: string): Promise<(Buffer | number)[]>;
  recordForceRelease(recordKey: string): Promise<[string, number?]>;
}

/** Defines the scripts on `client` (once per client) and returns them bound to it. */
export function defineSecurityScripts(client: Redis | Cluster): SecurityScripts {
  return {
    quotaTake: bindLuaScript(client, securityScripts.quotaTake),
    quotaGiveBack: bindLuaScript(client, securityScripts.quotaGiveBack),
    // Buffer replies: a stored body is binary.
    recordInspect: bindLuaScript(client, securityScripts.recordInspect, 'buffers'),
    recordForceRelease: bindLuaScript(client, securityScripts.recordForceRelease),
  } as SecurityScripts;
}
