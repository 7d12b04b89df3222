import type { Redis } from 'ioredis';
import { luaScriptSet } from '../../src/scripts/lua-scripts.js';
import { connect, uniquePrefix } from '../support/redis-test-keys.js';

interface ReleaseScript {
  release(recordKey: string, ownerToken: string, fence: string): Promise<number>;
}

describe('luaScriptSet', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });

  afterAll(() => redis.quit());

  it('sends Redis a script whose --#include lines are replaced by their shared fragments', async () => {
    // record-release-1.lua calls heldValue(), defined only in lua/shared/record-value.lua.
    const scripts = luaScriptSet<ReleaseScript>({ release: 'record-release-1.lua' })(redis);

    await expect(
      scripts.release(`${uniquePrefix('lua')}{absent}:record`, 'owner', '1'),
    ).resolves.toBe(0);
  });

  it('defines a script once on a client that several sets share', () => {
    const define = luaScriptSet<ReleaseScript>({ release: 'record-release-1.lua' });
    define(redis);
    const names = Object.keys(redis).filter((name) => name.startsWith('oncely_record_release_'));

    define(redis);

    expect(Object.keys(redis).filter((name) => name.startsWith('oncely_record_release_'))).toEqual(
      names,
    );
    expect(names).toHaveLength(2); // the command and its Buffer variant
  });

  it('refuses a script file whose name does not give its number of keys', () => {
    expect(() => luaScriptSet<ReleaseScript>({ release: 'record-release.lua' })).toThrow(
      'Lua script file "record-release.lua" must be named <name>-<numKeys>.lua, or <name>-n.lua when each call passes its number of keys first.',
    );
  });
});
