/** The claim registry scripts (`lua/claim-*.lua`): each call is one atomic round trip. */
import { luaScriptSet } from '../scripts/lua-scripts.js';

/** The claim scripts the registry runs, bound to one client. */
export interface ClaimScripts {
  /** Writes the instance's entry; returns the JSON of every other live entry. */
  announce(
    entriesKey: string,
    expiryKey: string,
    instance: string,
    claimJson: string,
    ttlMs: number,
  ): Promise<string[]>;
  /** Deletes the instance's entry. */
  withdraw(entriesKey: string, expiryKey: string, instance: string): Promise<number>;
}

/** Defines the scripts on a client (once per client) and returns them bound to it. */
export const defineClaimScripts = luaScriptSet<ClaimScripts>({
  announce: 'claim-announce-2.lua',
  withdraw: 'claim-withdraw-2.lua',
});
