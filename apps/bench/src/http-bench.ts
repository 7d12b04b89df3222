import type { Redis } from 'ioredis';
import type { BenchSettings } from './bench-settings.js';
import {
  contendersFor,
  serverSpec,
  type Contender,
  type HttpScenario,
  type ServerEnvironment,
  type ServerKind,
} from './http-contenders.js';
import { median, runLoad, type LoadResult } from './load-run.js';
import {
  commandCounts,
  commandDelta,
  countRoundTrips,
  totalOf,
  type CommandCounts,
} from './redis-commands.js';
import { postgresCpuDeltaMs, postgresCpuMs, processCpuMs, redisCpuMs } from './process-cpu.js';
import { ServerProcess } from './server-process.js';
import type { Platform } from './servers/server-config.js';

export interface Measurement extends LoadResult {
  readonly round: number;
  readonly redisCommands: number;
  readonly redisCommandsByName: CommandCounts;
  /** CPU the contender's server process used per request (µs): robust to a busy machine. */
  readonly serverCpuUsPerRequest: number;
  /** CPU the redis-server used per request (µs). */
  readonly redisCpuUsPerRequest: number;
  /** CPU all PostgreSQL server processes used per request (µs). */
  readonly postgresCpuUsPerRequest: number;
}

export interface ContenderSummary {
  readonly platform: Platform;
  readonly connections: number;
  readonly contender: Omit<Contender, 'request'> & { readonly path: string };
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Median over rounds of req/s ÷ the Nest 12 bare route's req/s in the same round. */
  readonly ratioToBare: number;
  /** The same against the contender's own Nest major (the peer runs on Nest 10). */
  readonly ratioToOwnBare: number;
  /** Median over rounds of p50 − its own bare route's p50 in the same round (ms). */
  readonly addedP50: number;
  /** Median over rounds, from `INFO commandstats` (Lua scripts' inner commands included). */
  readonly redisCommandsPerRequest: number;
  /** Medians over rounds of CPU µs per request, in the server process and in redis-server. */
  readonly serverCpuUsPerRequest: number;
  readonly redisCpuUsPerRequest: number;
  readonly postgresCpuUsPerRequest: number;
  /** Exact, from a separate pass under MONITOR at 1 connection (a Lua script counts once). */
  readonly redisRoundTripsPerRequest?: number;
  readonly roundTripsByName?: CommandCounts;
  readonly scriptedByName?: CommandCounts;
  readonly failures: number;
  readonly rounds: readonly Measurement[];
}

export interface HttpBenchContext {
  readonly settings: BenchSettings;
  readonly redis: Redis;
  readonly serverEnv: ServerEnvironment;
  readonly postgres: boolean;
  readonly log: (line: string) => void;
}

/**
 * Runs the HTTP contenders of `scenarios` on every platform: each app in its own process, loaded
 * from this one, contenders alternated A B C … A B C … for `rounds` rounds, at `connections` and
 * then at 1 connection; medians per contender, ratios against the bare route of the same round.
 */
export async function runHttpBench(
  context: HttpBenchContext,
  scenarios: ReadonlySet<HttpScenario>,
): Promise<ContenderSummary[]> {
  const summaries: ContenderSummary[] = [];
  for (const platform of context.settings.platforms) {
    const postgres =
      context.postgres && (platform === 'express' || process.env.BENCH_FASTIFY_POSTGRES === '1');
    const contenders = contendersFor(scenarios, platform, postgres);
    const servers = await startServers(context, platform, contenders);
    try {
      for (const connections of [context.settings.connections, 1]) {
        summaries.push(
          ...(await runAlternated(context, platform, contenders, servers, connections)),
        );
      }
    } finally {
      await Promise.all([...servers.values()].map((server) => server.stop()));
    }
  }
  return summaries;
}

async function startServers(
  context: HttpBenchContext,
  platform: Platform,
  contenders: readonly Contender[],
): Promise<Map<ServerKind, ServerProcess>> {
  const servers = new Map<ServerKind, ServerProcess>();
  for (const kind of new Set(contenders.map((contender) => contender.server))) {
    const spec = serverSpec(kind, platform, context.serverEnv);
    context.log(`  starting ${spec.name}`);
    servers.set(kind, await ServerProcess.start(spec, context.settings));
  }
  return servers;
}

async function runAlternated(
  context: HttpBenchContext,
  platform: Platform,
  contenders: readonly Contender[],
  servers: ReadonlyMap<ServerKind, ServerProcess>,
  connections: number,
): Promise<ContenderSummary[]> {
  const { settings, redis, log } = context;
  const seconds = connections === 1 ? settings.latencyDurationSeconds : settings.durationSeconds;
  const urlOf = (contender: Contender) => servers.get(contender.server)!.baseUrl;

  if (settings.warmupSeconds > 0) {
    for (const contender of contenders) {
      await runLoad(urlOf(contender), contender.request, connections, {
        seconds: settings.warmupSeconds,
      });
    }
  }

  const measured = new Map<string, Measurement[]>(contenders.map((c) => [c.id, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const contender of contenders) {
      const pid = servers.get(contender.server)!.pid;
      const before = await commandCounts(redis);
      const cpuBefore = [processCpuMs(pid), await redisCpuMs(redis), postgresCpuMs()] as const;
      const result = await runLoad(urlOf(contender), contender.request, connections, { seconds });
      const cpuAfter = [processCpuMs(pid), await redisCpuMs(redis), postgresCpuMs()] as const;
      const delta = commandDelta(before, await commandCounts(redis));
      const serverCpuUsPerRequest = ((cpuAfter[0] - cpuBefore[0]) * 1000) / result.requests;
      measured.get(contender.id)!.push({
        ...result,
        round,
        redisCommands: totalOf(delta),
        redisCommandsByName: delta,
        serverCpuUsPerRequest,
        redisCpuUsPerRequest: ((cpuAfter[1] - cpuBefore[1]) * 1000) / result.requests,
        postgresCpuUsPerRequest:
          (postgresCpuDeltaMs(cpuBefore[2], cpuAfter[2]) * 1000) / result.requests,
      });
      log(
        `  ${platform} c=${connections} round ${round} ${contender.id.padEnd(26)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms  cpu ${serverCpuUsPerRequest.toFixed(0)} µs/req${result.failures ? `  FAILURES ${result.failures} ${JSON.stringify(result.statuses)}` : ''}`,
      );
    }
  }

  const roundTrips = new Map<string, Awaited<ReturnType<typeof countRoundTrips>>>();
  if (connections === 1) {
    for (const contender of contenders) {
      roundTrips.set(
        contender.id,
        await countRoundTrips(context.serverEnv.redisPort, async () => {
          await runLoad(urlOf(contender), contender.request, 1, { amount: settings.countRequests });
        }),
      );
    }
  }

  const inRound = (id: string, round: number) =>
    measured.get(id)!.find((measurement) => measurement.round === round)!;
  return contenders.map((contender) => {
    const rounds = measured.get(contender.id)!;
    const counted = roundTrips.get(contender.id);
    const { request, ...described } = contender;
    return {
      platform,
      connections,
      contender: { ...described, path: request.path },
      rps: median(rounds.map((m) => m.rps)),
      p50: median(rounds.map((m) => m.p50)),
      p99: median(rounds.map((m) => m.p99)),
      ratioToBare: median(rounds.map((m) => m.rps / inRound('bare', m.round).rps)),
      ratioToOwnBare: median(rounds.map((m) => m.rps / inRound(contender.ownBare, m.round).rps)),
      addedP50: median(rounds.map((m) => m.p50 - inRound(contender.ownBare, m.round).p50)),
      redisCommandsPerRequest: median(rounds.map((m) => m.redisCommands / m.requests)),
      serverCpuUsPerRequest: median(rounds.map((m) => m.serverCpuUsPerRequest)),
      redisCpuUsPerRequest: median(rounds.map((m) => m.redisCpuUsPerRequest)),
      postgresCpuUsPerRequest: median(rounds.map((m) => m.postgresCpuUsPerRequest)),
      ...(counted && {
        redisRoundTripsPerRequest: totalOf(counted.roundTrips) / settings.countRequests,
        roundTripsByName: counted.roundTrips,
        scriptedByName: counted.scripted,
      }),
      failures: rounds.reduce((sum, m) => sum + m.failures, 0),
      rounds,
    };
  });
}
