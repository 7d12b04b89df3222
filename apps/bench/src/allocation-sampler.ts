/**
 * Preloaded (`--import`) into each contender process under `BENCH_ALLOC_PROF=1`: samples the
 * process's allocations, those the garbage collector already freed included, and writes them to
 * `BENCH_ALLOC_PROFILE` as a sampling heap profile (`.heapprofile`, opened by Chrome DevTools'
 * Memory panel) when the harness stops the process. A CPU profile shows how long collections
 * take; this shows which code allocates what they collect.
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

const target = process.env.BENCH_ALLOC_PROFILE;
if (target) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // Before the server's own SIGTERM listener closes the app and exits: an in-process session
  // answers synchronously, so the profile is on disk when the next listener runs.
  process.prependOnceListener('SIGTERM', () => {
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error) writeFileSync(target, JSON.stringify(result.profile));
    });
  });
}
