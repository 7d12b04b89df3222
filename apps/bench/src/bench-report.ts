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

/** Checks the targets against this run's figures (only those the run measured). */
export function checkTargets(
  http: readonly ContenderSummary[],
  coalesce: CoalesceSummary | undefined,
  memory: MemorySummary | undefined,
  connections: number,
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const platform of new Set(http.map((s) => s.platform))) {
    const at = (id: string, c = connections) => find(http, platform, c, id);
    const ratio = (id: string, min: number) => {
      const s = at(id);
      if (s) {
        checks.push({
          target: `${platform}: ${id} ≥ ${min}× bare req/s`,
          measured: `${fixed(s.ratioToBare, 2)}×${failureNote(s)}`,
          met: s.ratioToBare >= min && s.failures === 0,
        });
      }
    };
    ratio('singleflight-hit', 0.95);
    ratio('singleflight-miss', 0.85);
    ratio('idempotent-miss/postgres', 0.6);
    for (const kind of ['miss', 'replay']) {
      const ours = at(`idempotent-${kind}/redis`);
      const peer = at(`peer-${kind}`);
      if (ours && peer) {
        checks.push({
          target: `${platform}: idempotent-${kind}/redis req/s ≥ peer-${kind}`,
          measured: `${fixed(ours.rps, 0)} vs ${fixed(peer.rps, 0)} (${fixed(ours.rps / peer.rps, 2)}×)${failureNote(ours)}`,
          met: ours.rps >= peer.rps && ours.failures === 0,
        });
      }
      const ours1 = at(`idempotent-${kind}/redis`, 1);
      const peer1 = at(`peer-${kind}`, 1);
      if (ours1 && peer1) {
        checks.push({
          target: `${platform}: idempotent-${kind}/redis added p50 ≤ 0.5× peer-${kind}'s (1 connection, vs own bare)`,
          measured: `+${fixed(ours1.addedP50, 3)} ms vs +${fixed(peer1.addedP50, 3)} ms${failureNote(ours1)}`,
          met: ours1.addedP50 <= 0.5 * peer1.addedP50 && ours1.failures === 0,
        });
      }
    }
    for (const [id, expected] of [
      ['singleflight-hit', 1],
      ['singleflight-miss', 2],
    ] as const) {
      const s = at(id, 1);
      if (s?.redisRoundTripsPerRequest !== undefined) {
        checks.push({
          target: `${platform}: ${id} Redis round trips/request = ${expected}`,
          measured: fixed(s.redisRoundTripsPerRequest, 2),
          met: Math.abs(s.redisRoundTripsPerRequest - expected) < 0.05,
        });
      }
    }
  }
  if (coalesce) {
    checks.push({
      target: 'coalesce: 1 execution per round',
      measured: coalesce.executionsPerRound.join(', '),
      met: coalesce.executionsPerRound.every((n) => n === 1),
    });
    checks.push({
      target: 'coalesce: follower wake-up p99 ≤ 5 ms after the leader (other processes)',
      measured: `result in hand p50 ${fixed(coalesce.remoteWakeUps.p50, 2)} ms, p99 ${fixed(coalesce.remoteWakeUps.p99, 2)} ms (responses written p50 ${fixed(coalesce.remoteFollowers.p50, 2)} ms, p99 ${fixed(coalesce.remoteFollowers.p99, 2)} ms)`,
      met: coalesce.remoteWakeUps.p99 <= 5,
    });
  }
  if (memory) {
    checks.push({
      target: `memory: heap back to baseline after ${memory.keys} keys (resultTtl 0), no Redis key without TTL`,
      measured: `${fixed((memory.heapAfter - memory.heapBefore) / 1024 / 1024, 2)} MB (${fixed(memory.retainedBytesPerKey, 2)} B/key) retained, ${memory.redisKeysWithoutTtl} Redis keys without TTL`,
      met: memory.retainedBytesPerKey < 1 && memory.redisKeysWithoutTtl === 0,
    });
  }
  return checks;
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
      '| scenario | library (Nest) | req/s | p50 ms | p99 ms | × bare | × own bare | +p50 ms vs own bare | server CPU µs/req | Redis CPU µs/req | PostgreSQL CPU µs/req | Redis round trips/req | Redis cmds/req | failures |',
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
        `| ${s.contender.id} | ${s.contender.library} (${s.contender.nest}) | ${fixed(s.rps, 0)} | ${fixed(s.p50, 2)} | ${fixed(s.p99, 2)} | ${fixed(s.ratioToBare, 2)} | ${fixed(s.ratioToOwnBare, 2)} | ${fixed(s.addedP50, 3)} | ${fixed(s.serverCpuUsPerRequest, 0)} | ${fixed(s.redisCpuUsPerRequest, 0)} | ${fixed(s.postgresCpuUsPerRequest, 0)} | ${fixed(roundTrips, 2)} | ${fixed(s.redisCommandsPerRequest, 2)} | ${s.failures} |`,
      );
    }
    lines.push('');
  }
  if (results.coalesce) {
    const c = results.coalesce;
    const row = (name: string, d: CoalesceSummary['leader']) =>
      `| ${name} | ${d.count} | ${fixed(d.p50, 2)} | ${fixed(d.p99, 2)} | ${fixed(d.max, 2)} |`;
    lines.push(
      `### coalesce — ${c.concurrentRequests} concurrent identical requests over ${c.processes} processes, ${c.handlerMs} ms handler, ${c.rounds} rounds`,
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
    lines.push('### Targets (issue 7)', '', '| target | measured | |', '| --- | --- | --- |');
    for (const check of results.targets) {
      lines.push(`| ${check.target} | ${check.measured} | ${check.met ? 'met' : '**missed**'} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
