import type { Cluster, Redis } from 'ioredis';

/**
 * Resolves once the client's Redis answers a PING; rejects with the connection's error (a
 * refused or failed connection) or after `timeoutMs` without an answer (a server that accepts
 * connections but says nothing). What the adapters' `probe` runs for the start-up: it never
 * waits for ioredis' own connect timeout, and leaves the client as it found it, reconnecting.
 */
export function probeRedis(client: Redis | Cluster, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      client.off('error', settle);
      client.off('ready', ping);
      if (error) reject(error);
      else resolve();
    };
    const ping = () => {
      client.ping().then(
        () => settle(),
        (error: Error) => settle(error),
      );
    };
    const timer = setTimeout(
      () => settle(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    client.on('error', settle);
    if (client.status === 'ready') {
      ping();
      return;
    }
    client.once('ready', ping);
    if (client.status === 'wait') client.connect().catch(() => undefined);
  });
}
