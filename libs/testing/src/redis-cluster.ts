/**
 * A throwaway Redis Cluster of masters only, on spare loopback ports: enough to prove that every
 * script keeps its keys in one slot and that notices cross nodes.
 */
import { redisCli, waitUntil } from './redis-cli.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

export interface RedisCluster {
  readonly nodes: readonly { host: string; port: number }[];
  /** The masters themselves, to restart one (same port, same nodes.conf) in a fault test. */
  readonly servers: readonly RedisServer[];
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(
        await startRedisServer({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '2000',
          ],
        }),
      );
    }
    await redisCli(
      servers[0]!.port,
      '--cluster',
      'create',
      ...servers.map((server) => `${server.host}:${server.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    );
    await waitUntilClusterOk(servers);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes: servers.map(({ host, port }) => ({ host, port })),
    servers,
    stop,
  };
}

/** Waits until every node reports `cluster_state:ok` (after creation, or a node's restart). */
export async function waitUntilClusterOk(
  servers: readonly RedisServer[],
  timeoutMs?: number,
): Promise<void> {
  for (const server of servers) {
    await waitUntil(
      async () => (await redisCli(server.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
      `cluster state ok on port ${server.port}`,
      timeoutMs,
    );
  }
}
