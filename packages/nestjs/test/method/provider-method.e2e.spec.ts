import { Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
  RouteOptionsError,
} from '@oncely/core';
import { IdempotentKey, OncelyModule, SingleFlight } from '@oncely/nestjs';
import { DataSource } from 'typeorm';
import { Executions, Gates } from '../fixtures/test-app.js';
import { SharedBackends, writeEffect } from '../support/shared-backends.js';

const SCHEMA = Symbol('schema');
const SOURCE = Symbol('source');

interface LedgerMessage {
  readonly messageId: string;
  readonly account: string;
  readonly amount: number;
}

/** A plain provider, no controller anywhere: what a consumer library or a job would call. */
@Injectable()
class LedgerConsumer {
  constructor(
    @Inject(Executions) private readonly executions: Executions,
    @Inject(Gates) private readonly gates: Gates,
    @Inject(SOURCE) private readonly source: DataSource,
    @Inject(SCHEMA) private readonly schema: string,
  ) {}

  @IdempotentKey({
    namespace: 'message',
    operation: 'consume',
    scope: () => 'ledger',
    target: 'args.0.messageId',
    input: ['args.0.account', 'args.0.amount'],
    idempotencyKey: 'ignored',
    onBusy: 'wait',
  })
  @SetMetadata('test:listener', 'ledger.booked')
  async book(message: LedgerMessage): Promise<{ booked: number; execution: number }> {
    const execution = this.executions.hit(`book:${message.messageId}`);
    await this.gates.pass(message.messageId);
    await writeEffect(this.source, this.schema, message.messageId, message.amount);
    return { booked: message.amount, execution };
  }

  @IdempotentKey({
    namespace: 'message',
    operation: 'refund',
    scope: () => 'ledger',
    target: 'args.0',
    input: ['args.1'],
    idempotencyKey: 'ignored',
  })
  async refund(refundId: string, amount: number): Promise<{ refunded: number }> {
    this.executions.hit(`refund:${refundId}`);
    await this.gates.pass(refundId);
    await writeEffect(this.source, this.schema, refundId, -amount);
    return { refunded: amount };
  }

  @SingleFlight({ operation: 'fx-rate', target: 'args.0', resultTtl: 60_000 })
  async rate(currency: string): Promise<{ currency: string; execution: number }> {
    const execution = this.executions.hit(`rate:${currency}`);
    await this.gates.pass(`rate:${currency}`);
    return { currency, execution };
  }

  notProtected(value: number): number {
    return value * 2;
  }
}

describe('@IdempotentKey / @SingleFlight on provider methods (Redis + PostgreSQL, two nodes)', () => {
  const backends = new SharedBackends();
  const nodes: TestingModule[] = [];

  beforeAll(async () => {
    await backends.start();
    for (let i = 0; i < 2; i++) {
      const { options, source } = await backends.node();
      const node = await Test.createTestingModule({
        imports: [OncelyModule.forRoot(options)],
        providers: [
          LedgerConsumer,
          Executions,
          Gates,
          { provide: SOURCE, useValue: source },
          { provide: SCHEMA, useValue: backends.schema.name },
        ],
      }).compile();
      await node.init();
      nodes.push(node);
    }
  });

  afterAll(async () => {
    await Promise.allSettled(nodes.map((node) => node.close()));
    await backends.stop();
  });

  const consumer = (i: number) => nodes[i]!.get(LedgerConsumer);
  const executions = (name: string) =>
    nodes.reduce((sum, node) => sum + node.get(Executions).of(name), 0);
  const openGate = (name: string) => nodes.forEach((node) => node.get(Gates).open(name));
  const entered = (name: string) =>
    Promise.race(nodes.map((node) => node.get(Gates).entered$(name)));

  it('runs concurrent duplicates on two nodes once; all share the one result', async () => {
    const message = { messageId: 'm-1', account: 'acc-1', amount: 40 };
    const calls = Array.from({ length: 6 }, (_, i) => consumer(i % 2).book({ ...message }));
    await entered('m-1');
    openGate('m-1');
    const results = await Promise.all(calls);
    expect(results).toEqual(Array.from({ length: 6 }, () => ({ booked: 40, execution: 1 })));
    expect(executions('book:m-1')).toBe(1);
    expect(await backends.effectRows('m-1')).toBe(1);
    expect(await backends.recordRows('message:consume:v1:ledger:m-1')).toBe(1);
  });

  it('replays a later duplicate from the consumption log without running the method', async () => {
    const message = { messageId: 'm-2', account: 'acc-1', amount: 5 };
    openGate('m-2');
    await expect(consumer(0).book(message)).resolves.toEqual({ booked: 5, execution: 1 });
    await expect(consumer(1).book({ ...message })).resolves.toEqual({ booked: 5, execution: 1 });
    await expect(consumer(0).book({ ...message })).resolves.toEqual({ booked: 5, execution: 1 });
    expect(executions('book:m-2')).toBe(1);
    expect(await backends.effectRows('m-2')).toBe(1);
  });

  it('refuses a reused message id with another payload and keeps the first effect', async () => {
    openGate('m-3');
    await consumer(0).book({ messageId: 'm-3', account: 'acc-1', amount: 7 });
    await expect(
      consumer(1).book({ messageId: 'm-3', account: 'acc-1', amount: 8 }),
    ).rejects.toBeInstanceOf(IdempotencyMismatchError);
    expect(executions('book:m-3')).toBe(1);
    expect(await backends.effectRows('m-3')).toBe(1);
  });

  it("refuses a duplicate in flight with onBusy 'reject' (the default)", async () => {
    const first = consumer(0).refund('r-1', 3);
    await entered('r-1');
    await expect(consumer(1).refund('r-1', 3)).rejects.toBeInstanceOf(IdempotencyConflictError);
    await expect(consumer(0).refund('r-1', 3)).rejects.toBeInstanceOf(IdempotencyConflictError);
    openGate('r-1');
    await expect(first).resolves.toEqual({ refunded: 3 });
    await expect(consumer(1).refund('r-1', 3)).resolves.toEqual({ refunded: 3 });
    expect(executions('refund:r-1')).toBe(1);
    expect(await backends.effectRows('r-1')).toBe(1);
  });

  it('coalesces concurrent @SingleFlight calls across nodes and caches the result', async () => {
    const calls = Array.from({ length: 4 }, (_, i) => consumer(i % 2).rate('EUR'));
    await entered('rate:EUR');
    openGate('rate:EUR');
    const results = await Promise.all(calls);
    expect(results).toEqual(Array.from({ length: 4 }, () => ({ currency: 'EUR', execution: 1 })));
    await expect(consumer(1).rate('EUR')).resolves.toEqual({ currency: 'EUR', execution: 1 });
    expect(executions('rate:EUR')).toBe(1);
  });

  it('keeps the metadata of other decorators and leaves other methods alone', () => {
    const instance = consumer(0);
    const reflector = nodes[0]!.get(Reflector);
    expect(reflector.get('test:listener', instance.book)).toBe('ledger.booked');
    expect(Object.hasOwn(instance, 'book')).toBe(true);
    expect(instance.book.name).toBe('book');
    expect(Object.hasOwn(instance, 'notProtected')).toBe(false);
    expect(instance.notProtected(21)).toBe(42);
    // The class itself stays untouched: only the instances of apps using oncely are wrapped.
    expect(LedgerConsumer.prototype.book).not.toBe(instance.book);
  });

  it('fails the boot when a provider method asks for a client Idempotency-Key', async () => {
    @Injectable()
    class HeaderKeyed {
      @IdempotentKey({ operation: 'header-keyed', scope: () => 's', target: 'args.0' })
      async run(id: string): Promise<string> {
        return id;
      }
    }
    const module = await Test.createTestingModule({
      imports: [OncelyModule.forRoot({ namespace: backends.namespace })],
      providers: [HeaderKeyed],
    }).compile();
    await expect(module.init()).rejects.toThrow(/idempotencyKey: 'ignored'/);
    await module.close();
  });

  it('checks args paths when the decorator is applied', () => {
    expect(() => {
      class Bad {
        run(): void {}
      }
      IdempotentKey({ operation: 'bad', target: 'arguments.0', idempotencyKey: 'ignored' })(
        Bad.prototype,
        'run',
        Object.getOwnPropertyDescriptor(Bad.prototype, 'run')!,
      );
    }).toThrow(RouteOptionsError);
  });
});
