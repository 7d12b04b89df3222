/**
 * `npm run bench [-- <scenario>…]`: oncely side by side with a bare route and with
 * @node-idempotency/nestjs (and, on plain Express, with express-idempotency), on a redis-server of
 * its own (so command counts are ours only). Scenarios: bare, singleflight-miss, singleflight-hit,
 * idempotent-miss, idempotent-replay, peer-miss, peer-replay, pg-write, plain-express (or `http`
 * for all of those), coalesce, memory; none means all.
 */
import {
  requireService,
  services,
  startRedisServer,
  stopAllRedisServers,
} from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { expressPeerDir, peerDir, repoRoot, resultsDir } from './bench-paths.js';
import { checkTargets, markdownReport, type BenchResults, type Machine } from './bench-report.js';
import { benchSettingsFromEnv } from './bench-settings.js';
import { runCoalesceBench, type CoalesceSummary } from './coalesce-bench.js';
import { runHttpBench } from './http-bench.js';
import { HTTP_SCENARIOS, type HttpScenario, type ServerEnvironment } from './http-contenders.js';
import { runMemoryBench, type MemorySummary } from './memory-bench.js';
import { ensurePeerInstalled } from './peer-install.js';

const OTHER_SCENARIOS = ['coalesce', 'memory'] as const;
const KNOWN = new Set<string>([...HTTP_SCENARIOS, ...OTHER_SCENARIOS, 'http', 'all']);

function selectedScenarios(args: readonly string[]): Set<string> {
  for (const arg of args) {
    if (!KNOWN.has(arg)) {
      throw new Error(`Unknown scenario "${arg}". Known: ${[...KNOWN].join(', ')}.`);
    }
  }
  const wanted = args.length === 0 || args.includes('all') ? ['http', ...OTHER_SCENARIOS] : args;
  return new Set(wanted.flatMap((name) => (name === 'http' ? [...HTTP_SCENARIOS] : [name])));
}

function packageVersion(directory: string, name: string): string {
  try {
    const file = path.join(directory, 'node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

function gitRevision(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot })
      .toString()
      .trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: repoRoot }).length > 0;
    return dirty ? `${commit} + uncommitted changes` : commit;
  } catch {
    return 'unknown';
  }
}

/** Runs one statement on the bench's PostgreSQL database (version query, schema clean-up). */
async function postgresQuery<T>(sql: string): Promise<T[]> {
  const { host, port, username, password, database } = services.postgres;
  const source = new DataSource({ type: 'postgres', host, port, username, password, database });
  await source.initialize();
  try {
    return await source.query<T[]>(sql);
  } finally {
    await source.destroy();
  }
}

async function main(): Promise<void> {
  const scenarios = selectedScenarios(process.argv.slice(2));
  const settings = benchSettingsFromEnv();
  const startedLoad = os.loadavg();
  const log = (line: string) => console.log(line);
  const http = new Set(
    [...scenarios].filter((s): s is HttpScenario => HTTP_SCENARIOS.includes(s as HttpScenario)),
  );
  const wantsPeer = http.has('peer-miss') || http.has('peer-replay');
  const wantsExpressPeer = http.has('plain-express') && settings.platforms.includes('express');
  const postgres =
    http.has('idempotent-miss') || http.has('idempotent-replay') || http.has('pg-write');
  log(`oncely bench: ${[...scenarios].join(', ')}`);
  log(
    `settings: ${JSON.stringify(settings)}; load average ${startedLoad.map((n) => n.toFixed(2)).join(' ')}`,
  );

  if (wantsPeer) ensurePeerInstalled(peerDir, '@node-idempotency/nestjs');
  if (wantsExpressPeer) ensurePeerInstalled(expressPeerDir, 'express-idempotency');
  if (postgres) await requireService('postgres');
  const redisServer = await startRedisServer();
  const redis = new Redis({ host: redisServer.host, port: redisServer.port });
  const serverEnv: ServerEnvironment = {
    redisPort: redisServer.port,
    keyPrefix: 'oncely-bench:',
    postgresSchema: `oncely_bench_${randomBytes(4).toString('hex')}`,
  };
  log(`dedicated redis-server on port ${redisServer.port}`);

  let coalesce: CoalesceSummary | undefined;
  let memory: MemorySummary | undefined;
  try {
    const httpResults =
      http.size > 0 ? await runHttpBench({ settings, redis, serverEnv, postgres, log }, http) : [];
    if (scenarios.has('coalesce')) {
      log('coalesce');
      coalesce = await runCoalesceBench(settings, serverEnv, log);
    }
    if (scenarios.has('memory')) {
      log(`memory: ${settings.memoryKeys} keys`);
      memory = await runMemoryBench(settings, redis, {
        BENCH_REDIS_PORT: String(redisServer.port),
        BENCH_KEY_PREFIX: serverEnv.keyPrefix,
      });
    }

    const machine: Machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      loadAverageAtStart: startedLoad,
      loadAverageAtEnd: os.loadavg(),
      versions: {
        node: process.version,
        oncely: gitRevision(),
        '@nestjs/core': packageVersion(repoRoot, '@nestjs/core'),
        '@nestjs/core (peer app)': packageVersion(peerDir, '@nestjs/core'),
        '@node-idempotency/nestjs': packageVersion(peerDir, '@node-idempotency/nestjs'),
        '@node-idempotency/storage-adapter-redis': packageVersion(
          peerDir,
          '@node-idempotency/storage-adapter-redis',
        ),
        express: packageVersion(repoRoot, 'express'),
        'express-idempotency': packageVersion(expressPeerDir, 'express-idempotency'),
        'express-idempotency-redis-adapter': packageVersion(
          expressPeerDir,
          'express-idempotency-redis-adapter',
        ),
        ioredis: packageVersion(repoRoot, 'ioredis'),
        typeorm: packageVersion(repoRoot, 'typeorm'),
        autocannon: packageVersion(repoRoot, 'autocannon'),
        'redis-server': (await redis.info('server')).match(/redis_version:(\S+)/)?.[1] ?? 'unknown',
        ...(postgres && {
          postgresql:
            (await postgresQuery<{ server_version: string }>('SHOW server_version'))[0]
              ?.server_version ?? 'unknown',
        }),
      },
    };
    const date = new Date().toISOString().slice(0, 10);
    const results: BenchResults = {
      date,
      scenarios: [...scenarios],
      settings,
      machine,
      http: httpResults,
      ...(coalesce && { coalesce }),
      ...(memory && { memory }),
      targets: checkTargets(httpResults, coalesce, memory, settings.connections),
    };
    mkdirSync(resultsDir, { recursive: true });
    const all = scenarios.size === HTTP_SCENARIOS.length + OTHER_SCENARIOS.length;
    const file = path.join(resultsDir, `${date}${all ? '' : `-${[...scenarios].join('+')}`}.json`);
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\n${markdownReport(results)}`);
    console.log(`Results: ${path.relative(repoRoot, file)}`);
  } finally {
    redis.disconnect();
    await stopAllRedisServers();
    if (postgres)
      await postgresQuery(`DROP SCHEMA IF EXISTS "${serverEnv.postgresSchema}" CASCADE`);
  }
}

await main();
