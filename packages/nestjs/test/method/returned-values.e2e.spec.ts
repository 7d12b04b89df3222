import { Inject, Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  UnstorableValueError,
} from '@oncely/core';
import {
  IdempotentKey,
  OncelyModule,
  SingleFlight,
  type OncelyModuleOptions,
} from '@oncely/nestjs';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { PostgresSchema } from '../fixtures/postgres-schema.js';
import { Executions, Gates, uniqueNamespace } from '../fixtures/test-app.js';

/** A value of every kind the codec promises to keep as it is. */
function richValue(id: string) {
  return {
    id,
    at: new Date('2026-11-30T23:59:59.125Z'),
    big: 2n ** 70n + 1n,
    file: Buffer.from([0, 1, 254, 255]),
    raw: new Uint8Array([9, 8, 7]),
    byCurrency: new Map<string, unknown>([
      ['EUR', { rate: 1.08, at: new Date(0) }],
      ['JPY', 10n],
    ]),
    tags: new Set(['a', 'b']),
    nested: [new Map([[1, new Set([2n])]]), null, undefined],
    optional: undefined,
    nothing: null,
  };
}

class Receipt {
  constructor(readonly id: string) {}
}

@Injectable()
class Treasury {
  constructor(
    @Inject(Executions) private readonly executions: Executions,
    @Inject(Gates) private readonly gates: Gates,
  ) {}

  @IdempotentKey({ operation: 'issue', target: 'args.0', input: [], idempotencyKey: 'ignored' })
  async issue(id: string): Promise<ReturnType<typeof richValue>> {
    this.executions.hit(`issue:${id}`);
    return richValue(id);
  }

  @SingleFlight({ operation: 'quote', target: 'args.0', resultTtl: 60_000 })
  async quote(id: string): Promise<ReturnType<typeof richValue>> {
    this.executions.hit(`quote:${id}`);
    await this.gates.pass(`quote:${id}`);
    return richValue(id);
  }

  @IdempotentKey({ operation: 'receipt', target: 'args.0', input: [], idempotencyKey: 'ignored' })
  async receipt(id: string): Promise<Receipt> {
    this.executions.hit(`receipt:${id}`);
    await this.gates.pass(`receipt:${id}`);
    return new Receipt(id);
  }

  @IdempotentKey({
    operation: 'callback',
    target: 'args.0',
    input: [],
    idempotencyKey: 'ignored',
    onBusy: 'wait',
  })
  async callback(id: string): Promise<{ id: string; onDone: () => void }> {
    this.executions.hit(`callback:${id}`);
    await this.gates.pass(`callback:${id}`);
    return { id, onDone: () => undefined };
  }

  @SingleFlight({ operation: 'receipt-quote', target: 'args.0', resultTtl: 60_000 })
  async receiptQuote(id: string): Promise<Receipt> {
    this.executions.hit(`receipt-quote:${id}`);
    await this.gates.pass(`receipt-quote:${id}`);
    return new Receipt(id);
  }
}

interface Backend {
  readonly name: string;
  /** Module options of one node; every node of a backend shares its coordinator and store. */
  nodeOptions(namespace: string): Promise<OncelyModuleOptions>;
  stop(): Promise<void>;
}

function inMemory(): Backend {
  const coordinator = new InMemoryFlightCoordinator();
  const store = new InMemoryIdempotencyRecordStore();
  return {
    name: 'in memory',
    nodeOptions: async (namespace) => ({ namespace, coordinator, store }),
    stop: () => coordinator.close(),
  };
}

function onRedis(): Backend {
  const keyPrefix = `oncely-values-${randomUUID().slice(0, 8)}:`;
  const clients: Array<{ close(): Promise<void> }> = [];
  return {
    name: 'on Redis',
    nodeOptions: async (namespace) => {
      await requireService('redis');
      const coordinator = new RedisFlightCoordinator({ ...services.redis }, { keyPrefix });
      const store = new RedisIdempotencyRecordStore({ ...services.redis }, { keyPrefix });
      clients.push(coordinator, store);
      return { namespace, coordinator, store };
    },
    stop: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}

function onPostgres(): Backend {
  const keyPrefix = `oncely-values-${randomUUID().slice(0, 8)}:`;
  const schema = new PostgresSchema();
  const sources: DataSource[] = [];
  const coordinators: RedisFlightCoordinator[] = [];
  let created: Promise<unknown> | undefined;
  return {
    name: 'in PostgreSQL (Redis coordinator)',
    nodeOptions: async (namespace) => {
      await requireService('redis');
      await requireService('postgres');
      await (created ??= schema.create());
      const source = await schema.connect();
      const coordinator = new RedisFlightCoordinator({ ...services.redis }, { keyPrefix });
      sources.push(source);
      coordinators.push(coordinator);
      return { namespace, coordinator, store: new TypeOrmIdempotencyRecordStore(source) };
    },
    stop: async () => {
      await Promise.all(coordinators.map((coordinator) => coordinator.close()));
      await Promise.all(sources.map((source) => source.destroy()));
      if (created) await schema.drop();
    },
  };
}

describe.each([inMemory, onRedis, onPostgres])('values returned by provider methods', (make) => {
  const backend = make();
  const nodes: TestingModule[] = [];

  beforeAll(async () => {
    const namespace = uniqueNamespace('values');
    for (let i = 0; i < 2; i++) {
      const node = await Test.createTestingModule({
        imports: [OncelyModule.forRoot(await backend.nodeOptions(namespace))],
        providers: [Treasury, Executions, Gates],
      }).compile();
      await node.init();
      nodes.push(node);
    }
  });

  afterAll(async () => {
    await Promise.allSettled(nodes.map((node) => node.close()));
    await backend.stop();
  });

  const treasury = (i: number) => nodes[i]!.get(Treasury);
  const executions = (name: string) =>
    nodes.reduce((sum, node) => sum + node.get(Executions).of(name), 0);
  const openGate = (name: string) => nodes.forEach((node) => node.get(Gates).open(name));
  const entered = (name: string) =>
    Promise.race(nodes.map((node) => node.get(Gates).entered$(name)));

  describe(backend.name, () => {
    it('@IdempotentKey: the first caller and every replay get the same value, types and all', async () => {
      const first = await treasury(0).issue('i-1');
      const onOtherNode = await treasury(1).issue('i-1');
      const again = await treasury(0).issue('i-1');

      expect(executions('issue:i-1')).toBe(1);
      for (const value of [first, onOtherNode, again]) {
        expect(value).toStrictEqual(richValue('i-1'));
        expect(Buffer.isBuffer(value.file)).toBe(true);
        expect(Buffer.isBuffer(value.raw)).toBe(false);
        expect(Object.hasOwn(value, 'optional')).toBe(true);
      }
    });

    it('@SingleFlight: the leader and followers on both nodes get the same value', async () => {
      const calls = [0, 1, 0, 1].map((i) => treasury(i).quote('q-1'));
      await entered('quote:q-1');
      openGate('quote:q-1');
      const values = await Promise.all(calls);
      const cached = await treasury(1).quote('q-1');

      expect(executions('quote:q-1')).toBe(1);
      for (const value of [...values, cached]) expect(value).toStrictEqual(richValue('q-1'));
    });

    it('refuses a class instance for every caller and every retry, running the method once', async () => {
      const first = treasury(0).receipt('r-1');
      await entered('receipt:r-1');
      openGate('receipt:r-1');
      const refusal = expect.objectContaining({
        code: 'unstorable_value',
        path: '$',
        reason: 'an instance of Receipt would come back as a plain object',
      });

      await expect(first).rejects.toThrow(refusal);
      await expect(first).rejects.toThrow(/Treasury\.receipt.*an instance of Receipt/);
      await expect(treasury(1).receipt('r-1')).rejects.toThrow(refusal);
      await expect(treasury(0).receipt('r-1')).rejects.toThrow(UnstorableValueError);
      expect(executions('receipt:r-1')).toBe(1);
    });

    it('refuses a function for the caller and for a duplicate that waited for it', async () => {
      const first = treasury(0).callback('c-1');
      await entered('callback:c-1');
      const waiting = treasury(1).callback('c-1');
      openGate('callback:c-1');

      const outcomes = await Promise.allSettled([first, waiting, treasury(1).callback('c-1')]);
      for (const outcome of outcomes) {
        expect(outcome).toMatchObject({
          status: 'rejected',
          reason: expect.objectContaining({
            code: 'unstorable_value',
            route: 'Treasury.callback (provider method)',
            path: '$.onDone',
          }),
        });
      }
      expect(executions('callback:c-1')).toBe(1);
    });

    it('@SingleFlight: a refused value reaches the leader and the followers alike, and is kept', async () => {
      const calls = [0, 1, 1].map((i) => treasury(i).receiptQuote('rq-1'));
      await entered('receipt-quote:rq-1');
      openGate('receipt-quote:rq-1');
      const outcomes = await Promise.allSettled([...calls]);
      const later = await Promise.allSettled([treasury(0).receiptQuote('rq-1')]);

      for (const outcome of [...outcomes, ...later]) {
        expect(outcome).toMatchObject({
          status: 'rejected',
          reason: expect.objectContaining({ code: 'unstorable_value', path: '$' }),
        });
      }
      expect(executions('receipt-quote:rq-1')).toBe(1);
    });
  });
});
