import { readFileSync, readdirSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** Linux clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every mainstream kernel). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, ms) a process has used so far. Per request, it measures what a
 * contender costs without the scheduling noise of a shared machine that req/s suffers from.
 */
export function processCpuMs(pid: number): number {
  return cpuMsOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * CPU time (ms) each PostgreSQL server process of the machine has used so far, by pid: its
 * backends do the work of the PostgreSQL contenders on the same cores.
 */
export function postgresCpuMs(): Map<number, number> {
  const used = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.includes(' (postgres) ')) used.set(Number(entry), cpuMsOf(stat));
    } catch {
      // The process ended while the list was read.
    }
  }
  return used;
}

/**
 * What the PostgreSQL processes used between two `postgresCpuMs` snapshots (ms). A process that
 * ended in between takes its share with it (the contenders' pooled connections stay open, so
 * their backends do not); one that started counts in full.
 */
export function postgresCpuDeltaMs(
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

function cpuMsOf(stat: string): number {
  // Fields after the parenthesised command name, which may itself contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** CPU time (ms) the redis-server has used so far, from `INFO cpu`. */
export async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1000;
}
