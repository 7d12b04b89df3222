/** The SingleFlight scripts (`lua/flight-*.lua`): each call is one atomic round trip. */
import { luaScriptSet } from '../scripts/lua-scripts.js';

/** The flight scripts bound to one client; keys first, then arguments, as their headers list. */
export interface FlightScripts {
  acquire(
    lease: string,
    result: string,
    error: string,
    fence: string,
    waiters: string,
    owner: string,
    leaseTtlMs: number,
  ): Promise<unknown>;
  renew(
    lease: string,
    fence: string,
    waiters: string,
    owner: string,
    leaseTtlMs: number,
  ): Promise<unknown>;
  complete(
    lease: string,
    outcome: string,
    waiters: string,
    owner: string,
    payload: string,
    outcomeTtlMs: number,
    channel: string,
    businessKey: string,
  ): Promise<unknown>;
  release(
    lease: string,
    waiters: string,
    owner: string,
    channel: string,
    businessKey: string,
  ): Promise<unknown>;
  forceRelease(
    lease: string,
    waiters: string,
    channel: string,
    businessKey: string,
  ): Promise<unknown>;
}

/** Defines the scripts on a client (once per client) and returns them bound to it. */
export const defineFlightScripts = luaScriptSet<FlightScripts>({
  acquire: 'flight-acquire-5.lua',
  renew: 'flight-renew-3.lua',
  complete: 'flight-complete-3.lua',
  release: 'flight-release-2.lua',
  forceRelease: 'flight-force-release-2.lua',
});
