import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  CoordinatorUnavailableError,
  SingleFlight,
  type OncelyEvent,
  type SingleFlightOptions,
} from '@oncely/core';
import { RedisFlightCoordinator } from '@oncely/redis';
import {
  requireService,
  startRedisServer,
  stopAllRedisServers,
  type RedisServer,
} from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { eventually } from '../support/redis-test-keys.js';

jest.setTimeout(60_000);

describe('RedisFlightCoordinator while Redis is unreachable', () => {
  let server: RedisServer;
  const events: OncelyEvent[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  /** Engines on one coordinator that created its own client, and one on a user's client. */
  function engines(coordinator: RedisFlightCoordinator, options: SingleFlightOptions = {}) {
    return {
      open: new SingleFlight(coordinator, {
        onCoordinatorDown: 'open',
        events: (event) => events.push(event),
        ...options,
      }),
      closed: new SingleFlight(coordinator, { onCoordinatorDown: 'closed', ...options }),
    };
  }

  beforeAll(async () => {
    await requireService('redis');
    server = await startRedisServer();
  });

  afterAll(async () => {
    for (const close of closers) await close();
    await stopAllRedisServers();
  });

  it('runs uncoordinated (open) or fails typed (closed), then resumes after a restart', async () => {
    const owned = new RedisFlightCoordinator({ host: server.host, port: server.port });
    // A user's client with ioredis defaults: offline queue on, 20 retries per request.
    const userClient = new Redis({ host: server.host, port: server.port });
    userClient.on('error', () => undefined);
    const borrowed = new RedisFlightCoordinator(userClient, { commandTimeout: 500 });
    closers.push(
      () => owned.close(),
      () => borrowed.close(),
      async () => userClient.disconnect(),
    );
    await owned.connect();
    await borrowed.connect();
    const viaOwned = engines(owned);
    const viaUser = engines(borrowed);
    const coordinatedFence = async (flight: SingleFlight) =>
      (await flight.run(randomUUID(), async ({ fence }) => fence)).value;

    expect(await coordinatedFence(viaOwned.closed)).toBeGreaterThan(0);
    expect(await coordinatedFence(viaUser.closed)).toBeGreaterThan(0);

    await server.stop();

    for (const flight of [viaOwned, viaUser]) {
      const downBefore = events.filter((e) => e.outcome === 'coordinator_down').length;
      const key = randomUUID();
      await expect(flight.open.run(key, async ({ fence }) => ({ fence }))).resolves.toEqual({
        value: { fence: 0 },
        source: 'executed',
      });
      const down = events.filter((e) => e.outcome === 'coordinator_down');
      expect(down).toHaveLength(downBefore + 1);
      expect(down.at(-1)).toMatchObject({ mechanism: 'single-flight', key });
      expect(down.at(-1)!.error).toBeInstanceOf(CoordinatorUnavailableError);

      let executed = false;
      const failure = await flight.closed
        .run(randomUUID(), async () => {
          executed = true;
        })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(CoordinatorUnavailableError);
      expect((failure as CoordinatorUnavailableError).code).toBe('coordinator_unavailable');
      expect(executed).toBe(false);
    }

    await server.start();

    // Same coordinators, same engines: once the clients reconnect, flights are coordinated again.
    for (const flight of [viaOwned, viaUser]) {
      await eventually(
        () =>
          coordinatedFence(flight.closed).then(
            (fence) => fence > 0,
            () => false,
          ),
        'the client to reconnect',
      );
      const key = randomUUID();
      let executions = 0;
      const results = await Promise.all(
        [flight.closed, engines(flight === viaOwned ? owned : borrowed).closed].map((engine) =>
          engine.run(key, async ({ fence }) => {
            executions += 1;
            await new Promise((resolve) => setTimeout(resolve, 200));
            return fence;
          }),
        ),
      );
      expect(executions).toBe(1);
      expect(results.map((r) => r.source).sort()).toEqual(['executed', 'shared']);
      expect(results[0]!.value).toBeGreaterThan(0);
    }
  });

  it('starts coordinating once Redis comes up, when created while it was down', async () => {
    await server.stop();
    const coordinator = new RedisFlightCoordinator(
      { host: server.host, port: server.port },
      { commandTimeout: 300 },
    );
    closers.push(() => coordinator.close());
    const flight = new SingleFlight(coordinator, { onCoordinatorDown: 'closed' });

    await expect(coordinator.connect()).rejects.toBeInstanceOf(CoordinatorUnavailableError);
    await expect(flight.run(randomUUID(), async () => 'x')).rejects.toBeInstanceOf(
      CoordinatorUnavailableError,
    );

    await server.start();
    await eventually(
      () =>
        coordinator.connect().then(
          () => true,
          () => false,
        ),
      'the coordinator to connect',
    );
    const { value: fence } = await flight.run(randomUUID(), async (context) => context.fence);
    expect(fence).toBeGreaterThan(0);
  });
});
