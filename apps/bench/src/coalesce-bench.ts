import { Redis } from 'ioredis';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { BenchSettings } from './bench-settings.js';
import { serverSpec, type ServerEnvironment } from './http-contenders.js';
import { percentile } from './load-run.js';
import { ServerProcess } from './server-process.js';
import { preciseNow } from './servers/bench-handler.js';

const PROCESSES = 3;
const CONCURRENT = 200;

export interface Distribution {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface CoalesceSummary {
  readonly processes: number;
  readonly concurrentRequests: number;
  readonly handlerMs: number;
  readonly rounds: number;
  /** Unmeasured rounds before them. */
  readonly warmupRounds: number;
  /** Handler executions per round, over all processes: 1 each when coalescing works. */
  readonly executionsPerRound: readonly number[];
  readonly statuses: Readonly<Record<string, number>>;
  /**
   * Milliseconds from the leader's handler returning to each follower's response being written
   * (server side), for followers in the other processes (woken by the Redis notice) and in the
   * leader's own process (joined in memory); the leader's own response for reference.
   */
  readonly remoteFollowers: Distribution;
  readonly localFollowers: Distribution;
  readonly leader: Distribution;
  /** The same for remote followers, to the bench process receiving the response. */
  readonly remoteFollowersAtClient: Distribution;
  /**
   * The wake-up itself: ms from the leader's handler returning to each other process having the
   * result in hand (its flight resolved: the leader's complete, the notice and one acquire), before
   * any response is written. One per process and round, since a process's followers share it.
   */
  readonly remoteWakeUps: Distribution;
  /**
   * Per round, ms from the leader's handler returning to the last duplicate arriving (negative:
   * every duplicate was waiting before the leader finished, as the scenario intends).
   */
  readonly lastArrivalAfterLeader: readonly number[];
  /** Duplicates that arrived after the leader finished (they read the cache; not counted above). */
  readonly lateArrivals: number;
  /**
   * One Redis round trip (PING) from the bench process, sequential, measured just before the
   * rounds: the floor of any wake-up, and a gauge of how much the machine's load delays a hop.
   */
  readonly redisPingRoundTrip: Distribution;
}

interface Timing {
  readonly arrivedAt: number;
  readonly writtenAt?: number;
}

interface ServerStats {
  readonly slowExecutions: number;
  readonly slowRequests: Record<string, Timing>;
  readonly slowWakeUps: readonly number[];
}

interface Answer {
  readonly id: string;
  readonly server: number;
  readonly status: number;
  /** Followers' answers carry `Idempotent-Replayed: true`; the leader's does not. */
  readonly replayed: boolean;
  readonly receivedAt: number;
  readonly body: { executedBy?: number; finishedAt?: number };
}

/**
 * 200 concurrent identical requests over 3 processes (one Redis) against a 200 ms handler:
 * how many times it runs, and how long after the leader finished the followers are answered.
 */
export async function runCoalesceBench(
  settings: BenchSettings,
  serverEnv: ServerEnvironment,
  log: (line: string) => void,
): Promise<CoalesceSummary> {
  const servers: ServerProcess[] = [];
  const agents = Array.from(
    { length: PROCESSES },
    () => new http.Agent({ keepAlive: true, maxSockets: Infinity }),
  );
  try {
    for (let index = 0; index < PROCESSES; index++) {
      const spec = serverSpec('oncely-redis', 'express', serverEnv);
      servers.push(
        await ServerProcess.start(
          {
            ...spec,
            name: `${spec.name}#${index + 1}`,
            env: { ...spec.env, BENCH_SLOW_HANDLER_MS: String(settings.coalesceHandlerMs) },
          },
          settings,
        ),
      );
    }
    // Opens the 200 keep-alive connections, so that measured rounds do not pay for them, and
    // lets V8 optimise the paths of a burst: a cold process answers it several times slower.
    await fireRound(servers, agents, `warmup-${randomUUID()}`);
    for (let round = 1; round <= settings.coalesceWarmupRounds; round++) {
      await fireRound(servers, agents, `warmup-${round}-${randomUUID()}`);
    }
    const redisPingRoundTrip = distribution(await pingRoundTrips(serverEnv.redisPort, 500));

    const executionsPerRound: number[] = [];
    const statuses: Record<string, number> = {};
    const remote: number[] = [];
    const local: number[] = [];
    const leader: number[] = [];
    const remoteAtClient: number[] = [];
    const wakeUps: number[] = [];
    const lastArrivals: number[] = [];
    let lateArrivals = 0;
    for (let round = 1; round <= settings.coalesceRounds; round++) {
      const remoteBefore = remote.length;
      const before = await Promise.all(servers.map((server) => stats(server, agents)));
      const answers = await fireRound(servers, agents, `round-${round}-${randomUUID()}`);
      const after = await Promise.all(servers.map((server) => stats(server, agents)));
      const executions = after.reduce(
        (sum, s, i) => sum + s.slowExecutions - before[i]!.slowExecutions,
        0,
      );
      executionsPerRound.push(executions);
      const timings = Object.assign({}, ...after.map((s) => s.slowRequests)) as Record<
        string,
        Timing
      >;
      const finishedAt = answers.find((answer) => !answer.replayed)?.body.finishedAt;
      const executedBy = answers.find((answer) => !answer.replayed)?.body.executedBy;
      after.forEach((s, i) => {
        if (finishedAt === undefined || servers[i]!.pid === executedBy) return;
        for (const at of s.slowWakeUps.slice(before[i]!.slowWakeUps.length)) {
          wakeUps.push(at - finishedAt);
        }
      });
      if (finishedAt !== undefined) {
        lastArrivals.push(
          Math.max(...answers.map((answer) => timings[answer.id]?.arrivedAt ?? 0)) - finishedAt,
        );
      }
      for (const answer of answers) {
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        const { executedBy } = answer.body;
        const timing = timings[answer.id];
        if (finishedAt === undefined || timing?.writtenAt === undefined) continue;
        // A duplicate arriving after the leader finished reads the cached result: no wake-up.
        if (timing.arrivedAt > finishedAt) {
          lateArrivals += 1;
          continue;
        }
        const delay = timing.writtenAt - finishedAt;
        if (!answer.replayed) leader.push(delay);
        else if (servers[answer.server]!.pid === executedBy) local.push(delay);
        else {
          remote.push(delay);
          remoteAtClient.push(answer.receivedAt - finishedAt);
        }
      }
      const roundRemote = distribution(remote.slice(remoteBefore));
      log(
        `  coalesce round ${round}: ${executions} execution(s); last duplicate ${lastArrivals.at(-1)?.toFixed(1)} ms after the leader returned; leader answered +${leader.at(-1)?.toFixed(1)} ms, other processes' followers p50 +${roundRemote.p50.toFixed(1)} ms, max +${roundRemote.max.toFixed(1)} ms`,
      );
    }
    return {
      processes: PROCESSES,
      concurrentRequests: CONCURRENT,
      handlerMs: settings.coalesceHandlerMs,
      rounds: settings.coalesceRounds,
      warmupRounds: settings.coalesceWarmupRounds,
      executionsPerRound,
      statuses,
      remoteFollowers: distribution(remote),
      localFollowers: distribution(local),
      leader: distribution(leader),
      remoteFollowersAtClient: distribution(remoteAtClient),
      remoteWakeUps: distribution(wakeUps),
      lastArrivalAfterLeader: lastArrivals,
      lateArrivals,
      redisPingRoundTrip,
    };
  } finally {
    for (const agent of agents) agent.destroy();
    await Promise.all(servers.map((server) => server.stop()));
  }
}

async function fireRound(
  servers: readonly ServerProcess[],
  agents: readonly http.Agent[],
  customer: string,
): Promise<Answer[]> {
  const body = JSON.stringify({ customer, amount: '100.00' });
  return Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => {
      const server = i % servers.length;
      const id = `${customer}-${i}`;
      return request(servers[server]!, agents[server]!, 'POST', '/slow', body, {
        'x-bench-request': id,
      }).then(({ status, json, receivedAt, replayed }) => ({
        id,
        server,
        status,
        replayed,
        receivedAt,
        body: json as Answer['body'],
      }));
    }),
  );
}

async function stats(server: ServerProcess, agents: readonly http.Agent[]): Promise<ServerStats> {
  const { json } = await request(server, agents[0]!, 'GET', '/stats');
  return json as ServerStats;
}

function request(
  server: ServerProcess,
  agent: http.Agent,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; receivedAt: number; replayed: boolean }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        agent,
        headers: { 'content-type': 'application/json', 'x-tenant': 'tenant-1', ...headers },
      },
      (response) => {
        const receivedAt = preciseNow();
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          try {
            resolve({
              status: response.statusCode ?? 0,
              json: JSON.parse(text),
              receivedAt,
              replayed: response.headers['idempotent-replayed'] === 'true',
            });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function pingRoundTrips(port: number, count: number): Promise<number[]> {
  const client = new Redis({ host: '127.0.0.1', port });
  try {
    await client.ping();
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const startedAt = performance.now();
      await client.ping();
      times.push(performance.now() - startedAt);
    }
    return times;
  } finally {
    client.disconnect();
  }
}

function distribution(values: readonly number[]): Distribution {
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}
