/** The SingleFlight Lua scripts. */
import type { Cluster, Redis } from 'ioredis';
import { bindLuaScript, loadLuaScript } from './lua-scripts.js';

const flightScripts = {
  acquire: loadLuaScript('flight-acquire-5.lua'),
  renew: loadLuaScript('flight-renew-3.lua'),
  complete: loadLuaScript('flight-complete-3.lua'),
  release: loadLuaScript('flight-release-2.lua'),
};

type ScriptCall = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

/** The flight scripts, callable on one client: keys first, then arguments. */
export type FlightScriptRunner = Record<keyof typeof flightScripts, ScriptCall>;

/** Defines the scripts on `client` (once per client) and returns them bound to it. */
export function defineFlightScripts(client: Redis | Cluster): FlightScriptRunner {
  return {
    acquire: bindLuaScript(client, flightScripts.acquire),
    renew: bindLuaScript(client, flightScripts.renew),
    complete: bindLuaScript(client, flightScripts.complete),
    release: bindLuaScript(client, flightScripts.release),
  };
}
