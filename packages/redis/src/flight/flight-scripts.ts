/** The SingleFlight scripts (`lua/flight-*.lua`): each call is one atomic round trip. */
import { luaScriptSet } from '../scripts/lua-scripts.js';

/** The flight scripts bound to one client; the flight key first, then arguments, as their headers list. */
export interface FlightScripts {
  acquire(key: string, owner: string, leaseTtlMs: number): Promise<unknown>;
  renew(key: string, owner: string, leaseTtlMs: number): Promise<unknown>;
  complete(
    key: string,
    owner: string,
    taggedOutcome: string,
    outcomeTtlMs: number,
    channel: string,
    message: string,
  ): Promise<unknown>;
  release(key: string, owner: string, channel: string, message: string): Promise<unknown>;
  forceRelease(key: string, channel: string, message: string): Promise<unknown>;
  evict(key: string, channel: string, message: string): Promise<unknown>;
  inspect(key: string): Promise<unknown>;
}

/** Defines the scripts on a client (once per client) and returns them bound to it. */
export const defineFlightScripts = luaScriptSet<FlightScripts>({
  acquire: 'flight-acquire-1.lua',
  renew: 'flight-renew-1.lua',
  complete: 'flight-complete-1.lua',
  release: 'flight-release-1.lua',
  forceRelease: 'flight-force-release-1.lua',
  evict: 'flight-evict-1.lua',
  inspect: 'flight-inspect-1.lua',
});
