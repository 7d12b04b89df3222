import type { CoalesceSummary } from './coalesce-bench.js';
import type { ContenderSummary } from './http-bench.js';
import type { MemorySummary } from './memory-bench.js';

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly loadAverageAtStart: readonly number[];
  readonly loadAverageAtEnd: readonly number[];
  readonly versions: Readonly<Record<string, string>>;
}

export interface BenchResults {
  readonly date: string;
  readonly scenarios: readonly string[];
  readonly settings: object;
  readonly machine: Machine;
  readonly http: readonly ContenderSummary[];
  readonly coalesce?: CoalesceSummary;
  readonly memory?: MemorySummary;
  readonly targets: readonly TargetCheck[];
}

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

/** A contender answering errors is not a result: the statuses say what it answered instead. */
function failureNote(summary: ContenderSummary): string {
  if (summary.failures === 0) return '';
  const statuses: Record<string, number> = {};
  for (const round of summary.rounds) {
    for (const [status, count] of Object.entries(round.statuses)) {
      statuses[status] = (statuses[status] ?? 0) + count;
    }
  }
  return ` — but ${summary.failures} failures, statuses ${JSON.stringify(statuses)}`;
}

function find(
  http: readonly ContenderSummary[],
  platform: string,
  connections: number,
  id: string,
) {
  return http.find(
    (s) => s.platform === platform && s.connections === connections && s.contender.id === id,
  );
}

/**
 * A target of the HTTP path at the run's connections, as a ratio to each contender's own bare
 * route in the same run: at least `peer`'s ratio on its path, or at least `floor`; and at one
 * connection an added p50 no larger than `latencyPeer`'s (`peer` when not given).
 */
interface PathTarget {
  readonly ours: string;
  readonly platform?: string;
  readonly peer?: string;
  readonly floor?: number;
  readonly latencyPeer?: string;
}

/**
 * The redesigned HTTP path's targets ("The HTTP path, redesigned"). On Express a replay is to
 * cost no more than running the handler (≥ 1.0): the peer's replay measures cheaper than its own
 * Nest 10 bare route, which is no fair bar.
 */
const PATH_TARGETS: readonly PathTarget[] = [
  { ours: 'singleflight-hit', platform: 'fastify', peer: 'peer-replay' },
  { ours: 'idempotent-replay/redis', platform: 'fastify', peer: 'peer-replay' },
  { ours: 'singleflight-hit', platform: 'express', floor: 1, latencyPeer: 'peer-replay' },
  { ours: 'idempotent-replay/redis', platform: 'express', floor: 1, latencyPeer: 'peer-replay' },
  { ours: 'idempotent-miss/redis', peer: 'peer-miss' },
  { ours: 'express-miss', peer: 'express-idempotency-miss' },
  { ours: 'express-replay', peer: 'express-idempotency-replay' },
];

/** Checks the issue's targets against this run's figures (only those the run measured). */
export function checkTargets(
  http: readonly ContenderSummary[],
  coalesce: CoalesceSummary | undefined,
  memory: MemorySummary | undefined,
  connections: number,
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const check = (target: string, measured: string, met: boolean, s?: ContenderSummary) =>
    checks.push({
      target,
      measured: `${measured}${s ? failureNote(s) : ''}`,
      met: met && (s?.failures ?? 0) === 0,
    });
  for (const platform of new Set(http.map((s) => s.platform))) {
    const at = (id: string, c = connections) => find(http, platform, c, id);
    for (const target of PATH_TARGETS.filter((t) => (t.platform ?? platform) === platform)) {
      checkPath(target, at, check);
    }
    // Redis work per call: commands counted inside Lua scripts too.
    for (const [id, commands, cpu] of [
      ['idempotent-miss/redis', 4, 6],
      ['singleflight-miss', 4, 6],
      ['idempotent-replay/redis', 2, undefined],
      ['singleflight-hit', 2, undefined],
    ] as const) {
      const s = at(id);
      if (!s) continue;
      const cpuMet = cpu === undefined || s.redisCpuUsPerRequest <= cpu;
      check(
        `${platform}: ${id} ≤ ${commands} Redis commands${cpu === undefined ? '' : ` and ≤ ${cpu} µs Redis CPU`} per call`,
        `${fixed(s.redisCommandsPerRequest, 2)} commands, ${fixed(s.redisCpuUsPerRequest, 1)} µs`,
        s.redisCommandsPerRequest <= commands && cpuMet,
        s,
      );
    }
    for (const [id, min] of [
      ['idempotent-miss/pg-write', 0.5],
      ['idempotent-miss/pg-transactional', 0.75],
    ] as const) {
      const s = at(id);
      if (s) {
        check(
          `${platform}: ${id} ≥ ${min}× bare-pg-write req/s`,
          `${fixed(s.ratioToOwnBare, 2)}×`,
          s.ratioToOwnBare >= min,
          s,
        );
      }
    }
    const bareWrite = at('bare-pg-write');
    for (const id of ['idempotent-miss/pg-write', 'idempotent-miss/pg-transactional']) {
      const s = at(id);
      if (s && bareWrite) {
        const added = s.serverCpuUsPerRequest - bareWrite.serverCpuUsPerRequest;
        check(
          `${platform}: ${id} Node CPU ≤ 150 µs over bare-pg-write`,
          `+${fixed(added, 0)} µs`,
          added <= 150,
          s,
        );
      }
    }
  }
  if (coalesce) {
    check(
      'coalesce: 1 execution per round',
      coalesce.executionsPerRound.join(', '),
      coalesce.executionsPerRound.every((n) => n === 1),
    );
    check(
      'coalesce: followers in other processes receive their answer p99 ≤ 10 ms after the leader returned',
      `received p50 ${fixed(coalesce.remoteFollowersAtClient.p50, 2)} ms, p99 ${fixed(coalesce.remoteFollowersAtClient.p99, 2)} ms (result in hand p99 ${fixed(coalesce.remoteWakeUps.p99, 2)} ms, responses written p99 ${fixed(coalesce.remoteFollowers.p99, 2)} ms)`,
      coalesce.remoteFollowersAtClient.p99 <= 10,
    );
  }
  if (memory) {
    const retainedMb = (memory.heapAfter - memory.heapBefore) / 1024 / 1024;
    check(
      `memory: retained heap < 64 MB after ${memory.keys} keys, no Redis key without TTL`,
      `${fixed(retainedMb, 2)} MB (${fixed(memory.retainedBytesPerKey, 2)} B/key) retained, ${memory.redisKeysWithoutTtl} Redis keys without TTL`,
      retainedMb < 64 && memory.redisKeysWithoutTtl === 0,
    );
  }
  return checks;
}

/** One path target's two checks, for the contenders this run measured. */
function checkPath(
  { ours, peer, floor, latencyPeer = peer }: PathTarget,
  at: (id: string, connections?: number) => ContenderSummary | undefined,
  check: (target: string, measured: string, met: boolean, s?: ContenderSummary) => void,
): void {
  const o = at(ours);
  const p = peer === undefined ? undefined : at(peer);
  if (o && floor !== undefined) {
    check(
      `${o.platform}: ${ours} × own bare ≥ ${floor}`,
      `${fixed(o.ratioToOwnBare, 2)}×`,
      o.ratioToOwnBare >= floor,
      o,
    );
  } else if (o && p) {
    check(
      `${o.platform}: ${ours} × own bare ≥ ${peer}'s`,
      `${fixed(o.ratioToOwnBare, 2)}× vs ${fixed(p.ratioToOwnBare, 2)}×`,
      o.ratioToOwnBare >= p.ratioToOwnBare,
      o,
    );
  }
  const o1 = at(ours, 1);
  const p1 = latencyPeer === undefined ? undefined : at(latencyPeer, 1);
  if (o1 && p1) {
    check(
      `${o1.platform}: ${ours} added p50 ≤ ${latencyPeer}'s (1 connection, vs own bare)`,
      `+${fixed(o1.addedP50, 3)} ms vs +${fixed(p1.addedP50, 3)} ms`,
      o1.addedP50 <= p1.addedP50,
      o1,
    );
  }
}

export function markdownReport(results: BenchResults): string {
  const { machine } = results;
  const lines = [
    `## oncely bench — ${results.date}`,
    '',
    `${machine.cpus} CPUs (${machine.cpuModel}); load average ${machine.loadAverageAtStart.map((n) => n.toFixed(2)).join(' ')} at start, ${machine.loadAverageAtEnd.map((n) => n.toFixed(2)).join(' ')} at end.`,
    Object.entries(machine.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(' · '),
    `Settings: ${JSON.stringify(results.settings)}`,
    '',
  ];
  const groups = new Map<string, ContenderSummary[]>();
  for (const summary of results.http) {
    const key = `${summary.platform} — ${summary.connections} connection${summary.connections === 1 ? '' : 's'}`;
    groups.set(key, [...(groups.get(key) ?? []), summary]);
  }
  for (const [title, summaries] of groups) {
    lines.push(
      `### ${title}`,
      '',
      '| scenario | library (framework) | req/s | p50 ms | p99 ms | × bare | × own bare | +p50 ms vs own bare | server CPU µs/req | Redis CPU µs/req | PostgreSQL CPU µs/req | Redis round trips/req | Redis cmds/req | failures |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const s of summaries) {
      const roundTrips =
        s.redisRoundTripsPerRequest ??
        results.http.find(
          (o) =>
            o.platform === s.platform &&
            o.contender.id === s.contender.id &&
            o.redisRoundTripsPerRequest !== undefined,
        )?.redisRoundTripsPerRequest;
      lines.push(
        `| ${s.contender.id} | ${s.contender.library} (${s.contender.framework}) | ${fixed(s.rps, 0)} | ${fixed(s.p50, 2)} | ${fixed(s.p99, 2)} | ${fixed(s.ratioToBare, 2)} | ${fixed(s.ratioToOwnBare, 2)} | ${fixed(s.addedP50, 3)} | ${fixed(s.serverCpuUsPerRequest, 0)} | ${fixed(s.redisCpuUsPerRequest, 0)} | ${fixed(s.postgresCpuUsPerRequest, 0)} | ${fixed(roundTrips, 2)} | ${fixed(s.redisCommandsPerRequest, 2)} | ${s.failures} |`,
      );
    }
    lines.push('');
  }
  if (results.coalesce) {
    const c = results.coalesce;
    const row = (name: string, d: CoalesceSummary['leader']) =>
      `| ${name} | ${d.count} | ${fixed(d.p50, 2)} | ${fixed(d.p99, 2)} | ${fixed(d.max, 2)} |`;
    lines.push(
      `### coalesce — ${c.concurrentRequests} concurrent identical requests over ${c.processes} processes, ${c.handlerMs} ms handler, ${c.rounds} rounds after ${c.warmupRounds} unmeasured`,
      '',
      `Executions per round: ${c.executionsPerRound.join(', ')}; statuses ${JSON.stringify(c.statuses)}. Last duplicate arrived ${c.lastArrivalAfterLeader.map((ms) => fixed(ms, 1)).join(', ')} ms after the leader returned (negative: before); ${c.lateArrivals} late duplicates left out.`,
      '',
      '| ms after the leader returned | answers | p50 | p99 | max |',
      '| --- | ---: | ---: | ---: | ---: |',
      row('other processes: result in hand (flight resolved)', c.remoteWakeUps),
      row('followers, other processes (response written)', c.remoteFollowers),
      row('followers, other processes (received by the bench)', c.remoteFollowersAtClient),
      row("followers, leader's process (response written)", c.localFollowers),
      row('leader (response written)', c.leader),
      row('reference: one Redis PING round trip from the bench process', c.redisPingRoundTrip),
      '',
    );
  }
  if (results.memory) {
    const m = results.memory;
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    lines.push(
      `### memory — ${m.keys} distinct keys through @SingleFlight (resultTtl 0, Redis coordinator, concurrency ${m.concurrency})`,
      '',
      `Heap after forced GC: ${mb(m.heapBefore)} MB before, ${mb(m.heapAfter)} MB after (peak ${mb(m.heapPeak)} MB); ${fixed(m.retainedBytesPerKey, 2)} B/key retained; ${m.redisKeysLeft} Redis keys left right after, all expiring (${m.redisKeysWithoutTtl} without TTL); ${fixed(m.keysPerSecond, 0)} keys/s.`,
      '',
    );
  }
  if (results.targets.length > 0) {
    lines.push('### Targets', '', '| target | measured | |', '| --- | --- | --- |');
    for (const check of results.targets) {
      lines.push(`| ${check.target} | ${check.measured} | ${check.met ? 'met' : '**missed**'} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
