import { runInNewContext } from 'node:vm';
import { CoordinatorUnavailableError } from '@oncely/core';
import type { Redis } from 'ioredis';
import { RedisAvailability } from '../../src/connection/redis-availability.js';

/**
 * Under an app's Jest, oncely runs in the test's realm while Node makes socket errors in its own:
 * they are no `instanceof Error` there. A transport failure must still read as one, and a server
 * reply as a reply.
 */
describe('RedisAvailability with errors from another realm', () => {
  const availability = new RedisAvailability({ status: 'ready' } as Redis, 'redis://test', 1_000);

  it('reads a socket error made in another realm as Redis unavailable', async () => {
    const refused = runInNewContext(
      "Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6390'), { code: 'ECONNREFUSED' })",
    ) as Error;
    expect(refused instanceof Error).toBe(false);

    const failure = await availability.within(Promise.reject(refused)).catch((error) => error);

    expect(failure).toBeInstanceOf(CoordinatorUnavailableError);
    expect((failure as CoordinatorUnavailableError).cause).toBe(refused);
  });

  it('passes a reply error made in another realm on as the reply it is', async () => {
    const reply = runInNewContext(
      "Object.assign(new Error('ERR unknown command'), { name: 'ReplyError' })",
    ) as Error;

    const failure = await availability.within(Promise.reject(reply)).catch((error) => error);

    expect(failure).toBe(reply);
  });
});
