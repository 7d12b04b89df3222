import { Redis } from 'ioredis';

/** Calls per command name, from `INFO commandstats`. */
export type CommandCounts = Readonly<Record<string, number>>;

/**
 * Commands the bench's dedicated redis-server executed, from `INFO commandstats`. These include
 * the commands Lua scripts run (`redis.call`), not only the client's round trips; the harness's
 * own `info` calls are left out.
 */
export async function commandCounts(client: Redis): Promise<CommandCounts> {
  const info = await client.info('commandstats');
  const counts: Record<string, number> = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match && match[1] !== 'info') counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

export function commandDelta(before: CommandCounts, after: CommandCounts): CommandCounts {
  const delta: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after)) {
    const added = calls - (before[name] ?? 0);
    if (added > 0) delta[name] = added;
  }
  return delta;
}

export function totalOf(counts: CommandCounts): number {
  return Object.values(counts).reduce((sum, calls) => sum + calls, 0);
}

export interface RoundTripCount {
  /** Commands clients sent (a Lua script is one), per command name. */
  readonly roundTrips: CommandCounts;
  /** Commands run inside Lua scripts, per command name. */
  readonly scripted: CommandCounts;
}

/**
 * Counts round trips exactly while `work` runs, with `MONITOR` (which marks what scripts run as
 * `lua`). MONITOR slows Redis down, so this runs apart from the timed runs.
 */
export async function countRoundTrips(
  port: number,
  work: () => Promise<void>,
): Promise<RoundTripCount> {
  const monitor = await new Redis({ host: '127.0.0.1', port, lazyConnect: true }).monitor();
  const roundTrips: Record<string, number> = {};
  const scripted: Record<string, number> = {};
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = (args[0] ?? '').toLowerCase();
    if (name === 'info' || name === 'monitor') return;
    const counts = source === 'lua' ? scripted : roundTrips;
    counts[name] = (counts[name] ?? 0) + 1;
  });
  try {
    await work();
    // MONITOR lines trail the replies the clients already got.
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    monitor.disconnect();
  }
  return { roundTrips, scripted };
}
