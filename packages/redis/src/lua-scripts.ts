/**
 * Loading and registering the package's Lua scripts, one `lua/<name>-<numKeys>.lua` file each,
 * read once at module load (`../lua` is the same relative path from `src/` and from `dist/`,
 * which is why this file sits directly in `src/`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

export interface LuaScript {
  readonly name: string;
  readonly lua: string;
  readonly numberOfKeys: number;
}

/** A script bound to one client: keys first, then arguments. */
export type ScriptCommand = (...keysAndArgs: (string | number | Buffer)[]) => Promise<unknown>;

export function loadLuaScript(file: string): LuaScript {
  const lua = readFileSync(new URL(`../lua/${file}`, import.meta.url), 'utf8');
  const numberOfKeys = /-(\d+)\.lua$/.exec(file)?.[1];
  if (numberOfKeys === undefined) {
    throw new Error(`Lua script file "${file}" must be named <name>-<numKeys>.lua.`);
  }
  // The digest in the command name keeps two versions of this package sharing one client from
  // running each other's script.
  const digest = createHash('sha1').update(lua).digest('hex').slice(0, 10);
  const name = `oncely_${file.replace(/-\d+\.lua$/, '').replace(/-/g, '_')}_${digest}`;
  return { name, lua, numberOfKeys: Number(numberOfKeys) };
}

/**
 * Defines `script` on `client` with `defineCommand` unless it already is (a client shared by
 * several stores or coordinators defines it once) and returns it bound to the client. ioredis
 * runs it by EVALSHA and falls back to EVAL after a SCRIPT FLUSH or a failover. `replies: 'buffers'` binds
 * the variant whose bulk-string replies are Buffers, for binary bodies.
 */
export function bindLuaScript(
  client: Redis | Cluster,
  script: LuaScript,
  replies: 'strings' | 'buffers' = 'strings',
): ScriptCommand {
  const commands = client as unknown as Record<string, ScriptCommand | undefined>;
  if (typeof commands[script.name] !== 'function') {
    client.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.numberOfKeys });
  }
  const command = commands[replies === 'buffers' ? `${script.name}Buffer` : script.name]!;
  return (...keysAndArgs) => command.apply(client, keysAndArgs);
}
