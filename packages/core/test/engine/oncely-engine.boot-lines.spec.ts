import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  OncelyConfigurationError,
  createOncelyEngine,
  type OncelyEngine,
  type OncelyLogger,
} from '@oncely/core';
import { jest } from '@jest/globals';

/** A logger keeping every line, tagged with its level. */
function recording(): OncelyLogger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    log: (message) => lines.push(`log ${message}`),
    warn: (message) => lines.push(`warn ${message}`),
  };
}

describe('the start-up lines of the engine', () => {
  const created: OncelyEngine[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((engine) => engine.close()));
  });
  const engine = (options: Partial<Parameters<typeof createOncelyEngine>[0]>) => {
    const built = createOncelyEngine({ namespace: 'shop', tracing: false, ...options });
    created.push(built);
    return built;
  };

  it('logs one line per adapter, saying what it works on', async () => {
    const logger = recording();
    await engine({ logger }).start();

    expect(logger.lines).toEqual([
      'log oncely: flight coordinator in-memory (this process only)',
      'log oncely: record store in-memory (this process only)',
    ]);
  });

  it('names an adapter without describe() by its class', async () => {
    class PlainStore extends InMemoryIdempotencyRecordStore {
      override describe = undefined as never;
    }
    const logger = recording();
    await engine({ logger, store: new PlainStore() }).start();

    expect(logger.lines[1]).toBe('log oncely: record store PlainStore');
  });

  it('warns once, instead of the line, about an adapter whose backend does not answer within bootTimeout, and boots', async () => {
    class SilentCoordinator extends InMemoryFlightCoordinator {
      override describe = () => 'Silent tcp://10.0.0.1:1';
      probe = () => new Promise<void>(() => undefined);
    }
    class RefusingStore extends InMemoryIdempotencyRecordStore {
      override describe = () => 'Refusing tcp://10.0.0.1:2';
      probe = () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:2'));
    }
    const logger = recording();
    const startedAt = Date.now();
    await engine({
      logger,
      bootTimeout: 200,
      coordinator: new SilentCoordinator(),
      store: new RefusingStore(),
    }).start();

    expect(Date.now() - startedAt).toBeLessThan(500);
    const consequence =
      'The app boots anyway: until it answers, its routes answer as in any outage (onCoordinatorDown, 503 problems), and the claims kept there are registered once it does.';
    expect(logger.lines).toEqual([
      `warn oncely: flight coordinator Silent tcp://10.0.0.1:1 is unreachable (no answer within 200 ms). ${consequence}`,
      `warn oncely: record store Refusing tcp://10.0.0.1:2 is unreachable (connect ECONNREFUSED 10.0.0.1:2). ${consequence}`,
    ]);
  });

  it('logs nothing with logger: false', async () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await engine({ logger: false }).start();
      expect(log).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
  });

  it('logs to console by default', async () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await engine({}).start();
      expect(log.mock.calls).toEqual([
        ['oncely: flight coordinator in-memory (this process only)'],
        ['oncely: record store in-memory (this process only)'],
      ]);
    } finally {
      log.mockRestore();
    }
  });

  it('refuses a logger without log and warn, and a bootTimeout that is not a positive integer', () => {
    expect(() => createOncelyEngine({ namespace: 'shop', logger: console.log as never })).toThrow(
      OncelyConfigurationError,
    );
    expect(() => createOncelyEngine({ namespace: 'shop', logger: true as never })).toThrow(
      /^createOncelyEngine\(\) option "logger" must be false \(no start-up lines nor warnings\) or an object with log\(message\) and warn\(message\), such as console or Nest's Logger, got true\.$/,
    );
    expect(() => createOncelyEngine({ namespace: 'shop', bootTimeout: 0 })).toThrow(
      /^createOncelyEngine\(\) option "bootTimeout" must be a positive integer \(default 1000\), got 0\.$/,
    );
  });
});
