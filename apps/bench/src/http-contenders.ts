import path from 'node:path';
import { expressPeerDir, peerDir, serversDir } from './bench-paths.js';
import type { LoadRequest } from './load-run.js';
import type { ServerSpec } from './server-process.js';
import type { Platform } from './servers/server-config.js';

export const HTTP_SCENARIOS = [
  'bare',
  'interceptor-floor',
  'singleflight-miss',
  'singleflight-hit',
  'idempotent-miss',
  'idempotent-replay',
  'peer-miss',
  'peer-replay',
  'pg-write',
  'plain-express',
] as const;

export type HttpScenario = (typeof HTTP_SCENARIOS)[number];

export type ServerKind =
  | 'bare'
  | 'bare-postgres'
  | 'oncely-redis'
  | 'oncely-postgres'
  | 'peer'
  | 'oncely-express'
  | 'express-peer';

export interface Contender {
  /** Unique in a run, e.g. `idempotent-miss/postgres`. */
  readonly id: string;
  readonly scenario: HttpScenario | 'peer-bare';
  readonly library:
    | 'none'
    | '@oncely/nestjs'
    | '@node-idempotency/nestjs'
    | '@oncely/express'
    | 'express-idempotency';
  /** What serves the route: Nest 12 (ours), Nest 10 (the Nest peer's), or plain Express 5. */
  readonly framework: 'Nest 12' | 'Nest 10' | 'Express 5';
  readonly store: 'redis' | 'postgres' | 'none';
  readonly server: ServerKind;
  readonly request: LoadRequest;
  /**
   * The reference of "× own bare" and added latency: the unprotected route on the same
   * framework, or for the PostgreSQL writers the same write with nothing in front of it.
   */
  readonly ownBare: string;
  /** Runs on the Express platform only (plain-Express apps ignore the Nest platform). */
  readonly expressOnly?: boolean;
}

const headers = { 'content-type': 'application/json', 'x-tenant': 'tenant-1' };
const fixedBody = JSON.stringify({ customer: 'customer-1', amount: '100.00' });
const uniqueBody = '{"customer":"customer-[<id>]","amount":"100.00"}';

function post(pathname: string, body: string, extra: Record<string, string> = {}): LoadRequest {
  return { method: 'POST', path: pathname, headers: { ...headers, ...extra }, body };
}

/** The contenders of `scenarios` on one platform; `bare` (and the peer's own bare) always run. */
export function contendersFor(
  scenarios: ReadonlySet<HttpScenario>,
  platform: Platform,
  postgres: boolean,
): Contender[] {
  // One replayed key per contender, so that no contender replays what another one stored.
  const replayKey = (id: string) => `replay-${platform}-${id.replace('/', '-')}-${Date.now()}`;
  const all: Contender[] = [
    {
      id: 'bare',
      scenario: 'bare',
      library: 'none',
      framework: 'Nest 12',
      store: 'none',
      server: 'bare',
      request: post('/bare', fixedBody),
      ownBare: 'bare',
    },
    {
      id: 'bare-intercepted',
      scenario: 'interceptor-floor',
      library: 'none',
      framework: 'Nest 12',
      store: 'none',
      server: 'bare',
      request: post('/bare-intercepted', fixedBody),
      ownBare: 'bare',
    },
    {
      id: 'singleflight-miss',
      scenario: 'singleflight-miss',
      library: '@oncely/nestjs',
      framework: 'Nest 12',
      store: 'redis',
      server: 'oncely-redis',
      request: post('/flight', uniqueBody),
      ownBare: 'bare',
    },
    {
      id: 'singleflight-hit',
      scenario: 'singleflight-hit',
      library: '@oncely/nestjs',
      framework: 'Nest 12',
      store: 'redis',
      server: 'oncely-redis',
      request: post('/flight', fixedBody),
      ownBare: 'bare',
    },
    ...(['redis', 'postgres'] as const).flatMap((store): Contender[] => [
      {
        id: `idempotent-miss/${store}`,
        scenario: 'idempotent-miss',
        library: '@oncely/nestjs',
        framework: 'Nest 12',
        store,
        server: `oncely-${store}`,
        request: post('/idem', fixedBody, { 'idempotency-key': 'key-[<id>]' }),
        ownBare: 'bare',
      },
      {
        id: `idempotent-replay/${store}`,
        scenario: 'idempotent-replay',
        library: '@oncely/nestjs',
        framework: 'Nest 12',
        store,
        server: `oncely-${store}`,
        request: post('/idem', fixedBody, { 'idempotency-key': replayKey(`replay/${store}`) }),
        ownBare: 'bare',
      },
    ]),
    {
      id: 'peer-bare',
      scenario: 'peer-bare',
      library: 'none',
      framework: 'Nest 10',
      store: 'none',
      server: 'peer',
      request: post('/bare', fixedBody),
      ownBare: 'peer-bare',
    },
    {
      id: 'peer-miss',
      scenario: 'peer-miss',
      library: '@node-idempotency/nestjs',
      framework: 'Nest 10',
      store: 'redis',
      server: 'peer',
      request: post('/idem', fixedBody, { 'idempotency-key': 'key-[<id>]' }),
      ownBare: 'peer-bare',
    },
    {
      id: 'peer-replay',
      scenario: 'peer-replay',
      library: '@node-idempotency/nestjs',
      framework: 'Nest 10',
      store: 'redis',
      server: 'peer',
      request: post('/idem', fixedBody, { 'idempotency-key': replayKey('peer') }),
      ownBare: 'peer-bare',
    },
    ...postgresWriters(),
    ...plainExpress(replayKey),
  ];
  const wantsPeer = scenarios.has('peer-miss') || scenarios.has('peer-replay');
  return all.filter((contender) => {
    if (contender.store === 'postgres' && !postgres) return false;
    if (contender.expressOnly && platform !== 'express') return false;
    if (contender.scenario === 'bare') return true;
    if (contender.scenario === 'peer-bare') return wantsPeer;
    return scenarios.has(contender.scenario);
  });
}

/**
 * `pg-write`: one order row written per call. `bare-pg-write` writes it in its own transaction
 * with nothing in front; the idempotent misses write the same row beside their record, and with
 * `transactional: true` in the record's transaction. Each is a ratio to `bare-pg-write`.
 */
function postgresWriters(): Contender[] {
  const writer = (id: string, server: ServerKind, pathname: string, keyed: boolean): Contender => ({
    id,
    scenario: 'pg-write',
    library: keyed ? '@oncely/nestjs' : 'none',
    framework: 'Nest 12',
    store: 'postgres',
    server,
    request: post(pathname, fixedBody, keyed ? { 'idempotency-key': 'key-[<id>]' } : {}),
    ownBare: 'bare-pg-write',
  });
  return [
    writer('bare-pg-write', 'bare-postgres', '/pg-write', false),
    writer('idempotent-miss/pg-write', 'oncely-postgres', '/idem-write', true),
    writer('idempotent-miss/pg-transactional', 'oncely-postgres', '/idem-tx', true),
  ];
}

/**
 * `plain-express`: `@oncely/express` and `express-idempotency` (each with its Redis store) on
 * plain Express 5, each against a bare route of its own process, with the same handler.
 */
function plainExpress(replayKey: (id: string) => string): Contender[] {
  const contender = (
    id: string,
    library: Contender['library'],
    server: ServerKind,
    ownBare: string,
    key?: string,
  ): Contender => ({
    id,
    scenario: 'plain-express',
    library,
    framework: 'Express 5',
    store: key === undefined ? 'none' : 'redis',
    server,
    request: post(
      key === undefined ? '/bare' : '/idem',
      fixedBody,
      key === undefined ? {} : { 'idempotency-key': key },
    ),
    ownBare,
    expressOnly: true,
  });
  return [
    contender('express-bare', 'none', 'oncely-express', 'express-bare'),
    contender('express-miss', '@oncely/express', 'oncely-express', 'express-bare', 'key-[<id>]'),
    contender(
      'express-replay',
      '@oncely/express',
      'oncely-express',
      'express-bare',
      replayKey('express'),
    ),
    contender('express-idempotency-bare', 'none', 'express-peer', 'express-idempotency-bare'),
    contender(
      'express-idempotency-miss',
      'express-idempotency',
      'express-peer',
      'express-idempotency-bare',
      'key-[<id>]',
    ),
    contender(
      'express-idempotency-replay',
      'express-idempotency',
      'express-peer',
      'express-idempotency-bare',
      replayKey('express-idempotency'),
    ),
  ];
}

export interface ServerEnvironment {
  readonly redisPort: number;
  readonly keyPrefix: string;
  readonly postgresSchema: string;
}

export function serverSpec(
  kind: ServerKind,
  platform: Platform,
  env: ServerEnvironment,
): ServerSpec {
  const common = {
    BENCH_PLATFORM: platform,
    BENCH_REDIS_PORT: String(env.redisPort),
    BENCH_KEY_PREFIX: env.keyPrefix,
  };
  switch (kind) {
    case 'bare':
      return {
        name: `bare/${platform}`,
        file: path.join(serversDir, 'bare-server.js'),
        env: common,
      };
    case 'oncely-redis':
    case 'oncely-postgres':
      return {
        name: `${kind}/${platform}`,
        file: path.join(serversDir, 'oncely-server.js'),
        env: {
          ...common,
          BENCH_STORE: kind === 'oncely-redis' ? 'redis' : 'postgres',
          // Each server its own key space: the guard's cache must not serve the other's records.
          BENCH_KEY_PREFIX: `${env.keyPrefix}${kind}:`,
          BENCH_PG_SCHEMA: env.postgresSchema,
        },
      };
    case 'bare-postgres':
      return {
        name: `bare-postgres/${platform}`,
        file: path.join(serversDir, 'bare-pg-server.js'),
        env: { ...common, BENCH_PG_SCHEMA: env.postgresSchema },
      };
    case 'oncely-express':
      return {
        name: 'oncely-express/express',
        file: path.join(serversDir, 'express-server.js'),
        env: { ...common, BENCH_KEY_PREFIX: `${env.keyPrefix}${kind}:` },
      };
    case 'express-peer':
      return {
        name: 'express-idempotency/express',
        file: path.join(expressPeerDir, 'server.mjs'),
        env: common,
      };
    case 'peer':
      return {
        name: `node-idempotency/${platform}`,
        file: path.join(peerDir, 'server.mjs'),
        env: { ...common, BENCH_KEY_PREFIX: `${env.keyPrefix}node-idempotency` },
      };
  }
}
