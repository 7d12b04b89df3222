// The exact checks of a RabbitMQ consumption with killed consumers. Every process reports, in
// order, each handler run (`effect`), the outcome of each delivery (`outcome`, with the business
// key, whose target segment is the message id) and the settlement it sent (`settlement`); with
// prefetch 1 a delivery's settlement follows its outcome, so the two pair up per process.

/**
 * `events`: the distinct events; `publications`: every message published (events and copies);
 * `consumers`: the consumer fleet; `effects`: effect rows as `{ ref, n }`; `left`: `checkQueue`
 * of the queue and of its dead-letter queue once every consumer is gone; `stuck`: consumers
 * that did not stop when asked.
 */
export function verifyConsumption({ events, publications, consumers, effects, left, stuck }) {
  const failures = [];
  const expect = (what, actual, expected) => {
    if (actual !== expected) failures.push(`${what}: ${actual}, expected ${expected}`);
  };
  const ids = events.map((e) => e.messageId);
  const copies = countBy(publications.map((p) => p.messageId));
  const flagged = events.filter((e) => e.freeze).map((e) => e.messageId);
  const { kills } = consumers;

  expect('consumers SIGKILLed', kills.length, flagged.length);
  for (const kill of kills) {
    if (kill.exit.signal !== 'SIGKILL') failures.push(`${kill.node} exited ${kill.exit.signal}`);
  }
  const killedIds = countBy(kills.map((k) => k.messageId));
  for (const id of flagged) expect(`consumers killed on ${id}`, killedIds[id] ?? 0, 1);

  const rows = Object.fromEntries(effects.map((e) => [e.ref, e.n]));
  const rowTotal = effects.reduce((sum, e) => sum + e.n, 0);
  expect('effect rows', rowTotal, ids.length);
  expect('distinct events with an effect row', effects.length, ids.length);
  for (const id of ids) expect(`effect rows of ${id}`, rows[id] ?? 0, 1);

  const reports = consumers.processes.flatMap(({ worker }) => worker.messages);
  const runs = countBy(reports.flatMap((r) => r.effect ?? []));
  const executions = Object.values(runs).reduce((sum, n) => sum + n, 0);
  expect('handler runs', executions, ids.length);
  for (const id of ids) expect(`handler runs of ${id}`, runs[id] ?? 0, 1);

  const deliveries = consumers.processes.flatMap((consumer) => deliveriesOf(consumer, failures));
  const outcomes = countBy(deliveries.map((d) => d.outcome));
  const of = (outcome, id) => deliveries.filter((d) => d.outcome === outcome && d.messageId === id);
  for (const id of ids) {
    expect(`executed deliveries of ${id}`, of('executed', id).length, 1);
    expect(
      `replayed deliveries of ${id}`,
      of('replayed', id).length,
      copies[id] - 1 + (killedIds[id] ?? 0),
    );
  }
  const others = Object.keys(outcomes).filter((o) => o !== 'executed' && o !== 'replayed');
  for (const outcome of others) failures.push(`${outcomes[outcome]} deliveries ${outcome}`);

  const settled = deliveries.filter((d) => d.settlement);
  const settlements = {
    ack: settled.filter((d) => d.settlement.action === 'ack').length,
    requeue: settled.filter((d) => d.settlement.action !== 'ack' && d.settlement.requeue).length,
    reject: settled.filter((d) => d.settlement.action !== 'ack' && !d.settlement.requeue).length,
  };
  expect('acks', settlements.ack, publications.length);
  expect('nacks and rejects with requeue', settlements.requeue, 0);
  expect('rejects without requeue (dead-lettered)', settlements.reject, 0);
  const acks = countBy(
    settled.filter((d) => d.settlement.action === 'ack').map((d) => d.messageId),
  );
  for (const id of ids) expect(`acks of ${id}`, acks[id] ?? 0, copies[id]);

  // Unsettled: exactly the delivery each killed consumer froze on, executed and never acked.
  const unsettled = deliveries.filter((d) => !d.settlement);
  expect('deliveries never settled', unsettled.length, kills.length);
  for (const kill of kills) {
    const held = unsettled.filter((d) => d.node === kill.node && d.messageId === kill.messageId);
    if (held.length !== 1 || held[0].outcome !== 'executed') {
      failures.push(`${kill.node}: its in-flight ${kill.messageId} was not its one open delivery`);
    }
  }
  const redelivered = settled.filter((d) => d.settlement.redelivered);
  expect('redelivered messages', redelivered.length, kills.length);
  for (const kill of kills) {
    const again = redelivered.filter((d) => d.messageId === kill.messageId);
    const [first] = again;
    if (again.length !== 1 || first.outcome !== 'replayed' || first.settlement.action !== 'ack') {
      const answers = again.map((d) => `${d.outcome}/${d.settlement.action} on ${d.node}`);
      failures.push(
        `${kill.messageId} (in flight on ${kill.node}) redelivered: ${answers.join(', ') || 'never'}`,
      );
    }
  }

  expect('messages left in the queue (ready + unacked)', left.queue.messageCount, 0);
  expect('consumers left on the queue', left.queue.consumerCount, 0);
  expect('messages dead-lettered', left.dead.messageCount, 0);
  expect('consumers that did not stop when asked', stuck.length, 0);

  const duplicates = publications.length - ids.length;
  const killed = kills.map((kill) => {
    const replays = redelivered.filter((d) => d.messageId === kill.messageId).map((d) => d.node);
    return `${kill.messageId} in flight on ${kill.node}, replayed on ${replays.join(',') || '—'}`;
  });
  return {
    failures,
    rows: rowTotal,
    executions,
    settlements,
    notes: `${outcomes.executed ?? 0} executed + ${outcomes.replayed ?? 0} replayed deliveries (${duplicates} duplicates + ${redelivered.length} redeliveries); SIGKILLed between complete and ack: ${killed.join('; ') || 'none'}; left: queue ${left.queue.messageCount}, dead-letter ${left.dead.messageCount}`,
  };
}

/** One process's deliveries: `{ node, messageId, outcome, settlement? }`, in order. */
function deliveriesOf({ node, worker }, failures) {
  const deliveries = [];
  for (const report of worker.messages) {
    if (report.outcome !== undefined) {
      deliveries.push({ node, messageId: report.key.split(':')[4], outcome: report.outcome });
    } else if (report.settlement !== undefined) {
      const last = deliveries.at(-1);
      if (last && !last.settlement && last.messageId === report.settlement.data?.messageId) {
        last.settlement = report.settlement;
      } else {
        failures.push(
          `${node}: a settlement of ${report.settlement.data?.messageId} without its outcome`,
        );
      }
    }
  }
  return deliveries;
}

function countBy(values) {
  const counts = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
