import { jest } from '@jest/globals';
import { createOncely, type Oncely } from '@oncely/express';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueNamespace } from './fixtures/backends.js';

/** A port on 127.0.0.1 nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** A server that accepts connections and never says a word, like a hung Redis or a black hole. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** An app booting as a real one does: a Redis coordinator and store, both kinds of route. */
function redisApp(url: string, logger: Parameters<typeof createOncely>[0]['logger']): Oncely {
  const oncely = createOncely({
    namespace: uniqueNamespace('outage'),
    coordinator: new RedisFlightCoordinator(url),
    store: new RedisIdempotencyRecordStore(url),
    ...(logger !== undefined && { logger }),
  });
  oncely.idempotent({ name: 'POST /orders', operation: 'order', scope: 'user.tenantId' });
  oncely.singleFlight({ name: 'GET /quotes', operation: 'quote', input: [] });
  return oncely;
}

function recordingLogger() {
  const logs: string[] = [];
  const warnings: string[] = [];
  return {
    logs,
    warnings,
    logger: { log: (line: string) => logs.push(line), warn: (line: string) => warnings.push(line) },
  };
}

const consequence =
  'The app boots anyway: until it answers, its routes answer as in any outage (onCoordinatorDown, 503 problems), and the claims kept there are registered once it does.';

describe('booting while Redis is unreachable', () => {
  it('a closed port: one warning per adapter naming the URL, once, and the boot takes well under 1.5 s', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const { logs, warnings, logger } = recordingLogger();
    const oncely = redisApp(url, logger);
    try {
      const startedAt = Date.now();
      await oncely.start();
      expect(Date.now() - startedAt).toBeLessThan(1_500);

      await sleep(500); // reconnection attempts meanwhile: none is warned about again
      const refused = `connect ECONNREFUSED ${url.slice('redis://'.length)}`;
      expect(warnings).toEqual([
        `oncely: flight coordinator Redis ${url} (prefix oncely:) is unreachable (${refused}). ${consequence}`,
        `oncely: record store Redis ${url} (prefix oncely:) is unreachable (${refused}). ${consequence}`,
      ]);
      expect(logs).toEqual([]);
    } finally {
      await oncely.close();
    }
  });

  it('a server that never answers: the same warnings, after bootTimeout (1 s) and not ioredis’ 10 s', async () => {
    const silent = await silentServer();
    const url = `redis://127.0.0.1:${silent.port}`;
    const { logs, warnings, logger } = recordingLogger();
    const oncely = redisApp(url, logger);
    try {
      const startedAt = Date.now();
      await oncely.start();
      const took = Date.now() - startedAt;
      expect(took).toBeGreaterThanOrEqual(990);
      expect(took).toBeLessThan(1_500);

      await sleep(500);
      expect(warnings).toEqual([
        `oncely: flight coordinator Redis ${url} (prefix oncely:) is unreachable (no answer within 1000 ms). ${consequence}`,
        `oncely: record store Redis ${url} (prefix oncely:) is unreachable (no answer within 1000 ms). ${consequence}`,
      ]);
      expect(logs).toEqual([]);
    } finally {
      // Hung up first: a client quitting a server that never answers would wait for it forever.
      await silent.close();
      await oncely.close();
    }
  });

  it('logger: false silences the warnings, and the lines of a reachable Redis name it without its password', async () => {
    const silenced = redisApp(`redis://127.0.0.1:${await closedPort()}`, false);
    const { logs, warnings, logger } = recordingLogger();
    const reachable = redisApp('redis://:not-a-secret@127.0.0.1:6379/0', logger);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await silenced.start();
      expect(log).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
      log.mockRestore();
      warn.mockRestore();

      await reachable.start();
      expect(logs).toEqual([
        'oncely: flight coordinator Redis redis://127.0.0.1:6379 (prefix oncely:)',
        'oncely: record store Redis redis://127.0.0.1:6379 (prefix oncely:)',
      ]);
      expect(warnings).toEqual([]);
    } finally {
      log.mockRestore();
      warn.mockRestore();
      await Promise.all([silenced.close(), reachable.close()]);
    }
  });
});
