import net from 'node:net';

/** The NATS server the RPC suites publish to (JetStream not needed). */
export const nats = {
  host: process.env.NATS_HOST ?? '127.0.0.1',
  port: Number(process.env.NATS_PORT ?? 4222),
  get url(): string {
    return `nats://${this.host}:${this.port}`;
  },
};

/**
 * Like `requireService`, for the broker: a NATS server that does not accept connections FAILS
 * the suite (it is never skipped). Call it in `beforeAll`.
 */
export async function requireBroker(): Promise<void> {
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: nats.host, port: nats.port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
  if (!reachable) {
    throw new Error(
      `NATS is not reachable at ${nats.host}:${nats.port}. Start it: start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log`,
    );
  }
}
