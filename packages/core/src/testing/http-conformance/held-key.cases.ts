import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertProblem, assertReplayOf, assertRetryAfter, replayedCount } from './assertions.js';
import type { ConformanceResponse } from './conformance-client.js';
import type { CaseContext, CaseDefinition } from './conformance-case.js';

/** Waits for a response, failing (instead of hanging the run) when none comes in time. */
async function answered(
  pending: Promise<ConformanceResponse>,
  what: string,
  limitMs = 15_000,
): Promise<ConformanceResponse> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new assert.AssertionError({ message: `${what} never answered` })),
      limitMs,
    );
  });
  try {
    return await Promise.race([pending, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long the hop from the app's auth layer into oncely's wait may take; not observable over HTTP. */
const SETTLE_MS = 150;

/**
 * Issue 14, items 4 and 5: followers in the leader's own process honour `wait` and the transient
 * failure rule, and `maxDuration` ends a hung handler's hold on its key.
 */
export const heldKeyCases: readonly CaseDefinition[] = [
  {
    name: 'a same-process follower of a hung leader gets 409 with Retry-After once its wait is over',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const leader = http.post('/held-wait', { key, tenant: 't-1' });
      await probe.entered('held-wait:1');
      const follower = await answered(
        http.post('/held-wait', { key, tenant: 't-1' }),
        'the follower of a hung leader',
      );
      assertProblem(follower, 409, ProblemType.requestInFlight);
      assertRetryAfter(follower);
      assert.equal(probe.executions('held-wait'), 1);
      probe.open('held-wait:1');
      const done = await leader;
      assert.equal(done.status, 201);
      const replay = await http.post('/held-wait', { key, tenant: 't-1' });
      assertReplayOf(replay, done);
      assert.equal(probe.executions('held-wait'), 1);
    },
  },
  {
    name: 'when the leader fails transiently (503), one same-process waiter runs again and the others share its success',
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const leader = http.post('/transient', { key, tenant: 't-1' });
      await probe.entered('transient:1');
      const followers = Array.from({ length: 5 }, () =>
        http.post('/transient', { key, tenant: 't-1' }),
      );
      await probe.arrived('/transient', 6);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      probe.open('transient:1');
      const failed = await leader;
      assert.equal(failed.status, 503, failed.text);
      const responses = await Promise.all(
        followers.map((follower) => answered(follower, 'a follower')),
      );
      assert.deepEqual(
        responses.map((r) => r.status),
        Array(5).fill(201),
        responses.map((r) => `${r.status} ${r.text}`).join('\n'),
      );
      assert.equal(new Set(responses.map((r) => r.body?.id)).size, 1);
      assert.equal(responses[0]?.body?.execution, 2);
      assert.equal(replayedCount(responses), 4);
      assert.equal(probe.executions('transient'), 2);
    },
  },
  {
    name: 'when a SingleFlight leader fails (503), one of its 4 waiters runs again and the other 3 share that run: 2 executions',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const responses = await failedLeaderWithWaiters(
        probe,
        `/outages/1/${id}`,
        `outage:${id}`,
        (path) => http.get(path),
      );
      assert.equal(probe.executions(`outage:${id}`), 2);
      const [leader, ...waiters] = responses;
      assert.equal(leader?.status, 503, leader?.text);
      assert.equal(leader?.body?.execution, 1);
      assert.deepEqual(statusesOf(waiters), Array(4).fill('200 execution 2'));
      assert.equal(replayedCount(waiters), 3);
    },
  },
  {
    name: 'when a SingleFlight leader and the run after it both fail, the other 3 waiters share the second failure: 2 executions, not 5',
    run: async ({ http, probe }) => {
      const id = randomUUID();
      const responses = await failedLeaderWithWaiters(
        probe,
        `/outages/99/${id}`,
        `outage:${id}`,
        (path) => http.get(path),
      );
      assert.equal(probe.executions(`outage:${id}`), 2);
      assert.deepEqual(statusesOf(responses), [
        '503 execution 1',
        ...Array(4).fill('503 execution 2'),
      ]);
    },
  },
  {
    name: "when an idempotent onBusy: 'wait' leader and the run after it both fail, the other 3 waiters share the second failure: 2 executions, not 5",
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const responses = await failedLeaderWithWaiters(probe, '/outages/99', 'outage-wait', (path) =>
        http.post(path, { key, tenant: 't-1' }),
      );
      assert.equal(probe.executions('outage-wait'), 2);
      assert.deepEqual(statusesOf(responses), [
        '503 execution 1',
        ...Array(4).fill('503 execution 2'),
      ]);
    },
  },
  {
    name: 'maxDuration ends a hung handler: waiters get 503 lease-lost, the retry runs, the late completion is refused',
    run: async ({ http, probe, app }) => {
      const key = randomUUID();
      const send = () => http.post('/hung', { key, tenant: 't-1' });
      const leader = send();
      await probe.entered('hung:1');
      const waiter = await answered(send(), 'the waiter of a handler past maxDuration');
      assertProblem(waiter, 503, ProblemType.leaseLost);
      assertRetryAfter(waiter);
      const abandoned = await answered(leader, 'the client of a handler past maxDuration');
      assertProblem(abandoned, 503, ProblemType.leaseLost);
      assert.equal(probe.executions('hung'), 1);

      const retry = send();
      await probe.entered('hung:2');
      probe.open('hung:2');
      const ran = await retry;
      assert.equal(ran.status, 201, ran.text);
      assert.deepEqual(ran.body, { execution: 2 });

      probe.open('hung:1');
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const replay = await send();
      assertReplayOf(replay, ran);
      assert.equal(probe.executions('hung'), 2);
      if (app.records) assert.equal(await app.records(), 1);
    },
  },
  {
    name: 'a handler passing maxDuration after the timeout layer answered frees its key, and the app keeps running',
    settings: { timeoutLayer: true },
    needs: ['outer-answer-detection'],
    run: async ({ http, probe, harness }) => {
      const key = randomUUID();
      const send = () => http.post('/hung', { key, tenant: 't-1' });
      const timedOut = await send();
      assert.equal(timedOut.status, harness.timeoutStatus, timedOut.text);
      // The route's maxDuration (1 s) passes while the client already has its answer.
      await new Promise((resolve) => setTimeout(resolve, 1000 + SETTLE_MS));
      const retry = send();
      await probe.entered('hung:2');
      probe.open('hung:2');
      const ran = await answered(retry, 'the retry after maxDuration');
      assert.equal(ran.status, 201, ran.text);
      assert.deepEqual(ran.body, { execution: 2 });
      probe.open('hung:1');
      assert.equal(probe.executions('hung'), 2);
    },
  },
];

/**
 * Sends a request whose handler holds at `gate` and fails, then 4 identical ones that wait for
 * it, and opens the gate once all have arrived. Answers the leader's response first, then the
 * waiters' sorted by their execution number.
 */
async function failedLeaderWithWaiters(
  probe: CaseContext['probe'],
  path: string,
  gate: string,
  send: (path: string) => Promise<ConformanceResponse>,
): Promise<ConformanceResponse[]> {
  const leader = send(path);
  await probe.entered(gate);
  const waiters = Array.from({ length: 4 }, () => send(path));
  await probe.arrived(path, 5);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  probe.open(gate);
  const answers = await Promise.all([leader, ...waiters].map((r) => answered(r, path)));
  return [answers[0]!, ...answers.slice(1).sort((a, b) => executionOf(a) - executionOf(b))];
}

function executionOf(response: ConformanceResponse): number {
  return Number(response.body?.execution);
}

/** `status execution n` per response, to compare whole lists in one message. */
function statusesOf(responses: readonly ConformanceResponse[]): string[] {
  return responses.map((r) => `${r.status} execution ${String(r.body?.execution)}`);
}
