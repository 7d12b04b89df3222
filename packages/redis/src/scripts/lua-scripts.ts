/**
 * The one place that turns the package's Lua scripts into ioredis commands. Each script is a file
 * `lua/<name>-<numKeys>.lua`, or `lua/<name>-n.lua` for one whose callers pass its number of keys
 * first, read once at module load; a line `--#include <fragment>` in it
 * stands for `lua/shared/<fragment>.lua`, the pieces several scripts share (Redis' clock, the
 * lease checks).
 *
 * The directory comes from `lua/lua-directory.cjs`, which reports its own `__dirname`. This file
 * is compiled to ESM and to CommonJS, and neither way of finding oneself works in both
 * (`import.meta` is a syntax error in CommonJS, `__dirname` is undefined in ESM); a CommonJS file
 * loads from both, even under test runners whose `require()` cannot load ESM. The build copies
 * `lua/` to `dist/lua/`, so it sits two levels above this file in `src/scripts/`,
 * `dist/esm/scripts/` and `dist/cjs/scripts/` alike, and ships with the package.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { luaDirectory } from '../../lua/lua-directory.cjs';

const includeLine = /^--#include ([a-z-]+)$/gm;

/** A script file, and whether its bulk-string replies come back as Buffers (binary bodies). */
export type LuaScriptFile = string | { readonly file: string; readonly replies: 'buffers' };

interface LuaScript {
  readonly name: string;
  readonly lua: string;
  /** `undefined`: the number of keys is the first argument of every call. */
  readonly numberOfKeys: number | undefined;
  readonly replies: 'strings' | 'buffers';
}

type ScriptCommand = (...keysAndArgs: (string | number | Buffer)[]) => Promise<unknown>;

/**
 * Reads the scripts of one concern now and returns what binds them to a client: each call of the
 * binder defines the scripts on that client with `defineCommand` unless they already are (a
 * client shared by several stores or coordinators defines each once) and returns them as methods,
 * keys first (after their number, for a `-n` script), then arguments. ioredis runs them by EVALSHA and falls back to EVAL after a
 * SCRIPT FLUSH or a failover.
 */
export function luaScriptSet<Scripts>(files: {
  readonly [Name in keyof Scripts]: LuaScriptFile;
}): (client: Redis | Cluster) => Scripts {
  const scripts = Object.entries<LuaScriptFile>(files).map(
    ([method, file]) => [method, loadLuaScript(file)] as const,
  );
  return (client) =>
    Object.fromEntries(
      scripts.map(([method, script]) => [method, bindLuaScript(client, script)]),
    ) as Scripts;
}

function loadLuaScript(source: LuaScriptFile): LuaScript {
  const file = typeof source === 'string' ? source : source.file;
  const numberOfKeys = /-(\d+|n)\.lua$/.exec(file)?.[1];
  if (numberOfKeys === undefined) {
    throw new Error(
      `Lua script file "${file}" must be named <name>-<numKeys>.lua, or <name>-n.lua when each call passes its number of keys first.`,
    );
  }
  const lua = readLua(file).replace(includeLine, (_line, fragment: string) =>
    readLua(`shared/${fragment}.lua`),
  );
  // The digest in the command name keeps two versions of this package sharing one client from
  // running each other's script.
  const digest = createHash('sha1').update(lua).digest('hex').slice(0, 10);
  return {
    name: `oncely_${file.replace(/-(\d+|n)\.lua$/, '').replace(/-/g, '_')}_${digest}`,
    lua,
    numberOfKeys: numberOfKeys === 'n' ? undefined : Number(numberOfKeys),
    replies: typeof source === 'string' ? 'strings' : source.replies,
  };
}

function readLua(path: string): string {
  return readFileSync(join(luaDirectory, path), 'utf8');
}

function bindLuaScript(client: Redis | Cluster, script: LuaScript): ScriptCommand {
  const commands = client as unknown as Record<string, ScriptCommand | undefined>;
  if (typeof commands[script.name] !== 'function') {
    client.defineCommand(script.name, {
      lua: script.lua,
      ...(script.numberOfKeys !== undefined && { numberOfKeys: script.numberOfKeys }),
    });
  }
  const command = commands[script.replies === 'buffers' ? `${script.name}Buffer` : script.name]!;
  return (...keysAndArgs) => command.apply(client, keysAndArgs);
}
