import { killAllWorkers, spawnWorker, spawnWorkers } from '@oncely/testing-kit';

const echo = 'libs/testing/test/fixtures/echo.worker.ts';

describe('spawnWorkers', () => {
  afterAll(killAllWorkers);

  it('runs a TypeScript file in separate processes and collects their messages', async () => {
    const workers = spawnWorkers(3, echo, { args: (i) => ['stay', `worker-${i}`] });
    const hellos = await Promise.all(
      workers.map((worker) => worker.message<{ pid: number; args: string[] }>()),
    );

    expect(hellos.map((hello) => hello.args)).toEqual([['worker-0'], ['worker-1'], ['worker-2']]);
    expect(new Set(hellos.map((hello) => hello.pid)).size).toBe(3);
    expect(hellos.map((hello) => hello.pid)).not.toContain(process.pid);
    expect(workers[0]!.output()).toContain('plain output is not a message');
  });

  it('delivers messages from the parent to the worker', async () => {
    const worker = spawnWorker(echo, { args: ['stay'] });
    worker.send({ echo: 'one' });
    worker.send({ echo: 'two' });

    await worker.message<{ echoed?: string }>((m) => m.echoed === 'two');
    expect(worker.messages.slice(1)).toEqual([{ echoed: 'one' }, { echoed: 'two' }]);
    worker.send({ exit: true });
    await expect(worker.exited).resolves.toEqual({ code: 0, signal: null });
  });

  it('kills a worker with SIGKILL and reports how it ended', async () => {
    const worker = spawnWorker(echo, { args: ['stay'] });
    await worker.message();
    worker.kill();

    await expect(worker.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('keeps messages written just before a normal exit', async () => {
    const worker = spawnWorker(echo, { args: ['exit', 'x'] });

    await expect(worker.message<{ done?: boolean }>((m) => m.done === true)).resolves.toEqual({
      done: true,
    });
    await expect(worker.exited).resolves.toEqual({ code: 0, signal: null });
    expect(worker.messages).toHaveLength(2);
  });

  it('rejects a wait for a message the worker never sends once it has exited', async () => {
    const worker = spawnWorker(echo, { args: ['exit'] });

    await expect(worker.message<{ never?: boolean }>((m) => m.never === true)).rejects.toThrow(
      /exited without that message/,
    );
  });
});
