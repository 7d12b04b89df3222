import { readFileSync } from 'node:fs';
import net from 'node:net';

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const LOWEST = 10_000;
const CLUSTER_BUS_OFFSET = 10_000;

/**
 * The first port the kernel hands out to outgoing connections. A port of that range, free when
 * probed, can be taken by any client connection (to PostgreSQL, Redis, …) before the server that
 * was to listen on it starts: EADDRINUSE.
 */
function ephemeralStart(): number {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/);
    const port = Number(start);
    return Number.isInteger(port) && port > LOWEST + 2 * CLUSTER_BUS_OFFSET ? port : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A random loopback port nobody listens on, below the ephemeral range (see `ephemeralStart`).
 * With `clusterBus`, port + 10000 (where a cluster-enabled redis-server opens its bus) is free
 * too, and below that range as well. Random picks keep parallel test files from racing for the
 * same port; the remaining race window is the caller's start-up.
 */
export async function findFreePort(options: { clusterBus?: boolean } = {}): Promise<number> {
  const end = ephemeralStart() - (options.clusterBus ? CLUSTER_BUS_OFFSET : 0);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (end - LOWEST));
    if (!(await isFree(port))) continue;
    if (options.clusterBus && !(await isFree(port + CLUSTER_BUS_OFFSET))) continue;
    return port;
  }
  throw new Error(`No free loopback port found in ${LOWEST}-${end - 1} after 100 attempts.`);
}
