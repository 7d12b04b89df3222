import type { Cluster, Redis } from 'ioredis';

/**
 * Where a client points, for the start-up line and warnings: `redis://host:port/db`,
 * `rediss://…` over TLS, the socket path, or a Cluster and the nodes it knows so far. Built from
 * the client's options field by field, so a password (given in a URL or in the options) never
 * appears.
 */
export function redisAddress(client: Redis | Cluster): string {
  if (!client.isCluster) return `Redis ${nodeAddress(client as Redis)}`;
  const nodes = (client as Cluster).nodes('all').map(nodeAddress);
  return nodes.length > 0 ? `Redis Cluster ${nodes.join(', ')}` : 'Redis Cluster';
}

function nodeAddress(node: Redis): string {
  const { host, port, path, db, tls } = node.options;
  if (path) return path;
  const database = db ? `/${db}` : '';
  return `${tls ? 'rediss' : 'redis'}://${host ?? '127.0.0.1'}:${port ?? 6379}${database}`;
}
