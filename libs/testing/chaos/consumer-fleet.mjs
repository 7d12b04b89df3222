// RabbitMQ consumer processes for one scenario: the Nest suite's consumer worker
// (packages/nestjs/test/support/rabbitmq-consumer.worker.ts: a Nest microservice, `@IdempotentKey`
// on an event handler, records in PostgreSQL, flights in Redis, messages settled by oncely), each
// in its own process. One that stops dead on a flagged message is SIGKILLed and replaced by a new
// process; the reports of every process, killed or not, are kept for the checks.
import { spawnWorker } from '@oncely/testing-kit';

const WORKER = 'packages/nestjs/test/support/rabbitmq-consumer.worker.ts';
/** Resolves after `ms` without keeping the runner alive once everything else is done. */
const timeout = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Starts `count` consumers; `args(node)` gives the worker's arguments for the process named
 * `node`, `env` its environment on top of this one. Resolves once all of them consume.
 */
export async function startConsumers({ count = 3, args, env, startTimeoutMs = 60_000 }) {
  const processes = [];
  const slots = [];
  const generations = Array(count).fill(0);
  const kills = [];
  const replacements = new Set();
  const errors = [];

  async function launch(slot) {
    const node = `c${slot}.${generations[slot]++}`;
    const worker = spawnWorker(WORKER, { args: args(node), env });
    const consumer = { slot, node, worker, killed: false };
    processes.push(consumer);
    slots[slot] = consumer;
    try {
      await worker.message((m) => m.ready === node, startTimeoutMs);
    } catch (error) {
      worker.kill();
      throw error;
    }
  }

  /** SIGKILLs each consumer that reported it froze, and starts a new process in its place. */
  function killFrozen() {
    for (const consumer of slots) {
      const frozen = consumer.worker.messages.find((m) => m.frozen !== undefined);
      if (!frozen || consumer.killed) continue;
      consumer.killed = true;
      consumer.worker.kill('SIGKILL');
      const replacement = consumer.worker.exited.then(async (exit) => {
        kills.push({ node: consumer.node, messageId: frozen.messageId, exit });
        await launch(consumer.slot);
      });
      replacements.add(replacement);
      replacement
        .catch((error) => errors.push(`replacing ${consumer.node}: ${error?.message ?? error}`))
        .finally(() => replacements.delete(replacement));
    }
  }

  async function killAll() {
    await Promise.all(
      processes.map(async ({ worker }) => {
        worker.kill('SIGKILL');
        await worker.exited;
      }),
    );
  }

  const watcher = setInterval(killFrozen, 10);
  try {
    await Promise.all(Array.from({ length: count }, (_, slot) => launch(slot)));
  } catch (error) {
    clearInterval(watcher);
    await killAll();
    throw error;
  }

  return {
    /** Every process started, replacements included, in order: `{ slot, node, worker }`. */
    processes,
    /** The consumers SIGKILLed so far: `{ node, messageId, exit }`. */
    kills,
    /** Replacements that failed to start. */
    errors,
    /** Whether a killed consumer's replacement is still starting. */
    get replacing() {
      return replacements.size > 0;
    },
    /**
     * Stops watching, waits for replacements, then closes every consumer (its Nest app, its
     * connections); one still running after `timeoutMs` is SIGKILLed. Resolves with the nodes
     * that had to be killed.
     */
    async stop(timeoutMs = 15_000) {
      clearInterval(watcher);
      await Promise.allSettled([...replacements]);
      const stuck = [];
      await Promise.all(
        slots.map(async ({ node, worker }) => {
          worker.send({ stop: true });
          const exited = await Promise.race([worker.exited, timeout(timeoutMs)]);
          if (exited) return;
          stuck.push(node);
          worker.kill('SIGKILL');
          await worker.exited;
        }),
      );
      return stuck;
    },
    /** SIGKILLs every process still running: the clean-up that runs whatever happened. */
    async kill() {
      clearInterval(watcher);
      await killAll();
    },
  };
}
