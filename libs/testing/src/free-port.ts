import net from 'node:net';

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A random high loopback port nobody listens on. With `clusterBus`, port + 10000 (where a
 * cluster-enabled redis-server opens its bus) is free too. Random picks keep parallel test files
 * from racing for the same port; the remaining race window is the caller's start-up.
 */
export async function findFreePort(options: { clusterBus?: boolean } = {}): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if (!(await isFree(port))) continue;
    if (options.clusterBus && !(await isFree(port + 10_000))) continue;
    return port;
  }
  throw new Error('No free loopback port found in 20000-55000 after 100 attempts.');
}
