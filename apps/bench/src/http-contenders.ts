import path from 'node:path';
import { peerDir, serversDir } from './bench-paths.js';
import type { LoadRequest } from './load-run.js';
import type { ServerSpec } from './server-process.js';
import type { Platform } from './servers/server-config.js';

export const HTTP_SCENARIOS = [
  'bare',
  'singleflight-miss',
  'singleflight-hit',
  'idempotent-miss',
  'idempotent-replay',
  'peer-miss',
  'peer-replay',
] as const;

export type HttpScenario = (typeof HTTP_SCENARIOS)[number];

export type ServerKind = 'bare' | 'oncely-redis' | 'oncely-postgres' | 'peer';

export interface Contender {
  /** Unique in a run, e.g. `idempotent-miss/postgres`. */
  readonly id: string;
  readonly scenario: HttpScenario | 'peer-bare';
  readonly library: 'none' | '@oncely/nestjs' | '@node-idempotency/nestjs';
  readonly nest: 10 | 12;
  readonly store: 'redis' | 'postgres' | 'none';
  readonly server: ServerKind;
  readonly request: LoadRequest;
  /** The unprotected route on the same Nest major, for "× own bare" and added latency. */
  readonly ownBare: string;
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
      nest: 12,
      store: 'none',
      server: 'bare',
      request: post('/bare', fixedBody),
      ownBare: 'bare',
    },
    {
      id: 'singleflight-miss',
      scenario: 'singleflight-miss',
      library: '@oncely/nestjs',
      nest: 12,
      store: 'redis',
      server: 'oncely-redis',
      request: post('/flight', uniqueBody),
      ownBare: 'bare',
    },
    {
      id: 'singleflight-hit',
      scenario: 'singleflight-hit',
      library: '@oncely/nestjs',
      nest: 12,
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
        nest: 12,
        store,
        server: `oncely-${store}`,
        request: post('/idem', fixedBody, { 'idempotency-key': 'key-[<id>]' }),
        ownBare: 'bare',
      },
      {
        id: `idempotent-replay/${store}`,
        scenario: 'idempotent-replay',
        library: '@oncely/nestjs',
        nest: 12,
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
      nest: 10,
      store: 'none',
      server: 'peer',
      request: post('/bare', fixedBody),
      ownBare: 'peer-bare',
    },
    {
      id: 'peer-miss',
      scenario: 'peer-miss',
      library: '@node-idempotency/nestjs',
      nest: 10,
      store: 'redis',
      server: 'peer',
      request: post('/idem', fixedBody, { 'idempotency-key': 'key-[<id>]' }),
      ownBare: 'peer-bare',
    },
    {
      id: 'peer-replay',
      scenario: 'peer-replay',
      library: '@node-idempotency/nestjs',
      nest: 10,
      store: 'redis',
      server: 'peer',
      request: post('/idem', fixedBody, { 'idempotency-key': replayKey('peer') }),
      ownBare: 'peer-bare',
    },
  ];
  const wantsPeer = scenarios.has('peer-miss') || scenarios.has('peer-replay');
  return all.filter((contender) => {
    if (contender.store === 'postgres' && !postgres) return false;
    if (contender.scenario === 'bare') return true;
    if (contender.scenario === 'peer-bare') return wantsPeer;
    return scenarios.has(contender.scenario);
  });
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
    case 'peer':
      return {
        name: `node-idempotency/${platform}`,
        file: path.join(peerDir, 'server.mjs'),
        env: { ...common, BENCH_KEY_PREFIX: `${env.keyPrefix}node-idempotency` },
      };
  }
}
