/**
 * Where the test services live, and a guard that makes a test needing a service that is down
 * fail loudly: under CI a missing service is a failure, never a silent skip.
 */
import net from 'node:net';

export const services = {
  redis: {
    host: process.env.REDIS_HOST ?? '127.0.0.1',
    port: Number(process.env.REDIS_PORT ?? 6379),
  },
  postgres: {
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    username: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD ?? '',
    database: process.env.PGDATABASE ?? 'test',
  },
  mariadb: {
    host: process.env.MYSQL_HOST ?? '127.0.0.1',
    port: Number(process.env.MYSQL_PORT ?? 3306),
    username: process.env.MYSQL_USER ?? 'root',
    password: process.env.MYSQL_PASSWORD ?? '',
    database: process.env.MYSQL_DATABASE ?? 'test',
  },
  rabbitmq: {
    host: process.env.RABBITMQ_HOST ?? '127.0.0.1',
    port: Number(process.env.RABBITMQ_PORT ?? 5672),
    username: process.env.RABBITMQ_USER ?? 'guest',
    password: process.env.RABBITMQ_PASSWORD ?? 'guest',
  },
} as const;

/** The `redis://` URL of the test Redis, for adapters that build their own client from it. */
export function redisUrl(): string {
  return `redis://${services.redis.host}:${services.redis.port}`;
}

/** The AMQP URL of the test RabbitMQ, as `Transport.RMQ` and `amqplib.connect` take it. */
export function rabbitmqUrl(): string {
  const { host, port, username, password } = services.rabbitmq;
  return `amqp://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${host}:${port}`;
}

export type ServiceName = keyof typeof services;

function canConnect(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Throws with a clear message when the service does not accept connections. Call it in
 * `beforeAll`: the suite then fails (it is never skipped), locally and under CI alike.
 */
export async function requireService(name: ServiceName): Promise<void> {
  const { host, port } = services[name];
  if (!(await canConnect(host, port))) {
    throw new Error(
      `${name} is not reachable at ${host}:${port}. Start it (see .ci/run for the exact commands) and run the tests again.`,
    );
  }
}
