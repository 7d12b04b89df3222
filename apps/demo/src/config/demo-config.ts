import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the durable store lives: the embedded SQLite file, or a PostgreSQL / MySQL server. */
export type DemoDatabase =
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema?: string }
  | { readonly kind: 'mysql'; readonly url: string };

/** Everything the demo reads from its environment, resolved once at start-up. */
export interface DemoConfig {
  readonly port: number;
  readonly database: DemoDatabase;
  /** SingleFlight coordinator: Redis when set, the in-memory coordinator (one process) when not. */
  readonly redisUrl?: string;
  /** Prefix of every Redis key oncely writes, so several demos can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Key namespace: who owns the key space. */
  readonly namespace: string;
}

/** `apps/demo/.data/demo.sqlite`, the same path from `src/` (tests) and `dist/` (npm start). */
export const DEFAULT_SQLITE_FILE = fileURLToPath(
  new URL('../../.data/demo.sqlite', import.meta.url),
);

/**
 * Reads `PORT`, `DATABASE_URL` (`postgres://…` or `mysql://…`; SQLite when unset),
 * `DATABASE_SCHEMA` (PostgreSQL schema, which must exist), `REDIS_URL`, `ONCELY_REDIS_PREFIX` and
 * `SQLITE_FILE`. A malformed value fails the start with
 * the variable's name rather than falling back silently.
 */
export function demoConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  return {
    port: portOf(env.PORT),
    database: databaseOf(env.DATABASE_URL, env.SQLITE_FILE, env.DATABASE_SCHEMA),
    ...(env.REDIS_URL ? { redisUrl: redisUrlOf(env.REDIS_URL) } : {}),
    redisKeyPrefix: env.ONCELY_REDIS_PREFIX || 'oncely:',
    namespace: 'demo',
  };
}

/** Makes sure the SQLite file's folder exists before TypeORM opens it. */
export function prepareDatabase(database: DemoDatabase): void {
  if (database.kind === 'sqlite') mkdirSync(dirname(database.file), { recursive: true });
}

function portOf(value: string | undefined): number {
  if (value === undefined || value === '') return 3000;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`PORT must be an integer from 0 to 65535, got "${value}".`);
  }
  return port;
}

function databaseOf(
  url: string | undefined,
  sqliteFile: string | undefined,
  schema: string | undefined,
): DemoDatabase {
  if (!url) return { kind: 'sqlite', file: sqliteFile || DEFAULT_SQLITE_FILE };
  const protocol = protocolOf(url, 'DATABASE_URL');
  if (protocol === 'postgres:' || protocol === 'postgresql:') {
    return { kind: 'postgres', url, ...(schema ? { schema } : {}) };
  }
  if (protocol === 'mysql:' || protocol === 'mariadb:') {
    return { kind: 'mysql', url: url.replace(/^mariadb:/, 'mysql:') };
  }
  throw new Error(
    `DATABASE_URL must start with postgres:// or mysql:// (unset it to use the embedded SQLite file), got "${protocol}".`,
  );
}

function redisUrlOf(url: string): string {
  const protocol = protocolOf(url, 'REDIS_URL');
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new Error(`REDIS_URL must start with redis:// or rediss://, got "${protocol}".`);
  }
  return url;
}

function protocolOf(url: string, variable: string): string {
  try {
    return new URL(url).protocol;
  } catch {
    throw new Error(`${variable} is not a URL: "${url}".`);
  }
}
