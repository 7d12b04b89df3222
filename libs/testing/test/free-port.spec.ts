import { readFileSync } from 'node:fs';
import net from 'node:net';
import { findFreePort } from '@oncely/testing-kit';

/** Outgoing connections take their local port from this range; a server's port must not be in it. */
const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
  .split(/\s+/)
  .map(Number) as [number];

async function listens(port: number): Promise<boolean> {
  const server = net.createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}

describe('findFreePort', () => {
  it('picks free ports below the ephemeral range, so no client connection can take one first', async () => {
    for (let i = 0; i < 50; i++) {
      const port = await findFreePort();
      expect(port).toBeLessThan(ephemeralStart);
      expect(await listens(port)).toBe(true);
    }
  });

  it('with clusterBus, keeps the bus port (port + 10000) below that range and free too', async () => {
    for (let i = 0; i < 50; i++) {
      const port = await findFreePort({ clusterBus: true });
      expect(port + 10_000).toBeLessThan(ephemeralStart);
      expect(await listens(port + 10_000)).toBe(true);
    }
  });
});
