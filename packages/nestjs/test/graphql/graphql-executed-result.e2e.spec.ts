import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Inject, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import {
  Args,
  Field,
  GraphQLModule,
  InputType,
  Int,
  Mutation,
  ObjectType,
  Parent,
  Query,
  registerEnumType,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import type { IdempotencyRecordStore } from '@oncely/core';
import {
  IdempotentKey,
  OncelyCallErrorCode,
  OncelyGraphQLErrorCode,
  OncelyModule,
  type OncelyModuleOptions,
} from '@oncely/nestjs';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Executions, Gates } from '../fixtures/test-app.js';
import { SharedBackends, writeEffect } from '../support/shared-backends.js';

const SCHEMA = Symbol('schema');
const SOURCE = Symbol('source');

enum PaymentStatus {
  Settled = 'settled',
}
registerEnumType(PaymentStatus, { name: 'PaymentStatus' });

/** Live state the field resolvers read, shared by every node, changed by the tests. */
class Ledger {
  rate = 3;
  failNotes = false;
  readonly feeReads = new Map<string, number>();
  readonly noteReads = new Map<string, number>();

  read(reads: Map<string, number>, id: string): void {
    reads.set(id, (reads.get(id) ?? 0) + 1);
  }
}

@InputType()
class PaymentInput {
  @Field()
  requestId!: string;

  @Field(() => Int)
  amount!: number;
}

@ObjectType()
class Payment {
  @Field()
  id!: string;

  @Field(() => Int)
  amount!: number;

  @Field(() => Int)
  execution!: number;

  @Field(() => PaymentStatus)
  status!: PaymentStatus;

  constructor(id: string, amount: number, execution: number) {
    Object.assign(this, { id, amount, execution, status: PaymentStatus.Settled });
  }
}

@Resolver(() => Payment)
class PaymentsResolver {
  constructor(
    @Inject(Executions) private readonly executions: Executions,
    @Inject(Gates) private readonly gates: Gates,
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject(SOURCE) private readonly source: DataSource,
    @Inject(SCHEMA) private readonly schema: string,
  ) {}

  @Query(() => String)
  health(): string {
    return 'ok';
  }

  @Mutation(() => Payment)
  @IdempotentKey({
    operation: 'payment-pay',
    scope: 'headers.x-tenant',
    target: 'body.input.requestId',
    input: ['body.input'],
    idempotencyKey: 'ignored',
  })
  async pay(@Args('input', { type: () => PaymentInput }) input: PaymentInput): Promise<Payment> {
    return this.effect(input.requestId, input.amount);
  }

  /** Keyed by the Idempotency-Key header; duplicates wait for the first one's answer. */
  @Mutation(() => Payment)
  @IdempotentKey({ operation: 'payment-settle', scope: 'headers.x-tenant', onBusy: 'wait' })
  async settle(@Args('amount', { type: () => Int }) amount: number): Promise<Payment> {
    await this.gates.pass(`settle-${amount}`);
    return this.effect(`settle-${amount}`, amount);
  }

  /** A short lease: a node that stops renewing it loses it within a second. */
  @Mutation(() => Payment)
  @IdempotentKey({
    operation: 'payment-transfer',
    scope: 'headers.x-tenant',
    target: 'body.input.requestId',
    input: ['body.input'],
    idempotencyKey: 'ignored',
    leaseTtl: 1_000,
  })
  async transfer(
    @Args('input', { type: () => PaymentInput }) input: PaymentInput,
  ): Promise<Payment> {
    return this.effect(input.requestId, input.amount);
  }

  @ResolveField(() => Int)
  async fee(@Parent() payment: Payment): Promise<number> {
    this.ledger.read(this.ledger.feeReads, payment.id);
    if (payment.id.startsWith('slow-')) await sleep(150);
    if (payment.id.startsWith('held-')) await this.gates.pass(`fee:${payment.id}`);
    return payment.amount * this.ledger.rate;
  }

  @ResolveField(() => String, { nullable: true })
  note(@Parent() payment: Payment): string {
    this.ledger.read(this.ledger.noteReads, payment.id);
    if (this.ledger.failNotes) throw new Error(`no note for ${payment.id}`);
    return `note of ${payment.id}`;
  }

  private async effect(ref: string, amount: number): Promise<Payment> {
    const execution = this.executions.hit(ref);
    await writeEffect(this.source, this.schema, ref, amount);
    return new Payment(ref, amount, execution);
  }
}

/** A record store that can be cut off, as from a node that died: every call fails from then on. */
class SeveredStore implements IdempotencyRecordStore {
  severed = false;

  constructor(private readonly store: IdempotencyRecordStore) {}

  begin: IdempotencyRecordStore['begin'] = (...args) => this.call(() => this.store.begin(...args));
  complete: IdempotencyRecordStore['complete'] = (...args) =>
    this.call(() => this.store.complete(...args));
  release: IdempotencyRecordStore['release'] = (...args) =>
    this.call(() => this.store.release(...args));
  renew: IdempotencyRecordStore['renew'] = (...args) => this.call(() => this.store.renew(...args));
  purgeExpired: IdempotencyRecordStore['purgeExpired'] = (...args) =>
    this.call(() => this.store.purgeExpired(...args));

  private call<T>(run: () => Promise<T>): Promise<T> {
    return this.severed ? Promise.reject(new Error('store unreachable')) : run();
  }
}

@Module({})
class PaymentsModule {}

const FIELDS = 'id amount execution status fee note';
const pay = (fields = FIELDS) =>
  `mutation Pay($input: PaymentInput!) { pay(input: $input) { ${fields} } }`;

interface GraphQLBody {
  data?: Record<string, Record<string, unknown> | null> | null;
  errors?: Array<{ message: string; path?: unknown[]; extensions?: Record<string, unknown> }>;
}

describe('GraphQL replays return what the first client received (Apollo; Redis + PostgreSQL)', () => {
  const backends = new SharedBackends();
  const ledger = new Ledger();
  const apps: INestApplication[] = [];
  let severed!: SeveredStore;

  /**
   * One node. `OncelyModule` installs the plugin; a GraphQL module that only explores the
   * payments module (`include`) does not find it, which is how a server ends up without it.
   */
  async function start(options: OncelyModuleOptions, source: DataSource, plugin: boolean) {
    const payments: DynamicModule = {
      module: PaymentsModule,
      providers: [
        PaymentsResolver,
        Executions,
        Gates,
        { provide: Ledger, useValue: ledger },
        { provide: SOURCE, useValue: source },
        { provide: SCHEMA, useValue: backends.schema.name },
      ],
    };
    const module = await Test.createTestingModule({
      imports: [
        OncelyModule.forRoot(options),
        payments,
        GraphQLModule.forRoot<ApolloDriverConfig>({
          driver: ApolloDriver,
          autoSchemaFile: true,
          ...(!plugin && { include: [PaymentsModule] }),
        }),
      ],
    }).compile();
    const app = module.createNestApplication({ logger: false });
    await app.init();
    apps.push(app);
  }

  // Nodes 0 and 1 serve the tests; node 2 loses its store mid-request; node 3 has no plugin.
  beforeAll(async () => {
    await backends.start();
    for (let i = 0; i < 2; i++) {
      const { options, source } = await backends.node();
      await start(options, source, true);
    }
    const crashing = await backends.node();
    severed = new SeveredStore(crashing.options.store as IdempotencyRecordStore);
    await start({ ...crashing.options, store: severed }, crashing.source, true);
    const bare = await backends.node();
    await start(bare.options, bare.source, false);
  });

  afterAll(async () => {
    await Promise.allSettled(apps.map((app) => app.close()));
    await backends.stop();
  });

  const executions = (ref: string) =>
    apps.reduce((sum, app) => sum + app.get(Executions).of(ref), 0);
  const gates = () => apps.map((app) => app.get(Gates));

  async function graphql(
    node: number,
    query: string,
    variables: object,
    headers: Record<string, string> = {},
  ): Promise<GraphQLBody> {
    const response = await request(apps[node]!.getHttpServer())
      .post('/graphql')
      .set({ 'x-tenant': 't-1', ...headers })
      .send({ query, variables });
    return response.body as GraphQLBody;
  }
  const payOn = (node: number, requestId: string, amount: number, query = pay()) =>
    graphql(node, query, { input: { requestId, amount } });
  const codeOf = (body: GraphQLBody) => body.errors?.[0]?.extensions?.code;

  beforeEach(() => {
    ledger.rate = 3;
    ledger.failNotes = false;
  });

  it('replays the field resolvers’ first values while the state they read has changed', async () => {
    const first = await payOn(0, 'fee-1', 10);
    expect(first).toEqual({
      data: {
        pay: {
          id: 'fee-1',
          amount: 10,
          execution: 1,
          status: 'Settled',
          fee: 30,
          note: 'note of fee-1',
        },
      },
    });

    ledger.rate = 6;
    const retries = await Promise.all([payOn(1, 'fee-1', 10), payOn(0, 'fee-1', 10)]);
    expect(retries).toEqual([first, first]);
    // The replay ran no resolver of the app: neither the mutation nor its fields.
    expect(ledger.feeReads.get('fee-1')).toBe(1);
    expect(ledger.noteReads.get('fee-1')).toBe(1);
    expect(executions('fee-1')).toBe(1);
    expect(await backends.effectRows('fee-1')).toBe(1);

    const fresh = await payOn(1, 'fee-2', 10);
    expect(fresh.data?.pay?.fee).toBe(60);
  });

  it('replays a selection written with aliases and fragments, however it is spelled', async () => {
    const withFragment = `mutation Pay($input: PaymentInput!) {
      pay(input: $input) { ref: id charged: fee ...Amounts }
    }
    fragment Amounts on Payment { amount ... on Payment { execution } }`;
    const inline = pay('execution charged: fee amount ref: id');
    const first = await payOn(0, 'alias-1', 20, withFragment);
    expect(first).toEqual({
      data: { pay: { ref: 'alias-1', charged: 60, amount: 20, execution: 1 } },
    });

    ledger.rate = 9;
    const retry = await payOn(1, 'alias-1', 20, inline);
    expect(retry.errors).toBeUndefined();
    expect(retry.data?.pay).toEqual(first.data?.pay);
    expect(ledger.feeReads.get('alias-1')).toBe(1);
    expect(executions('alias-1')).toBe(1);
    expect(await backends.effectRows('alias-1')).toBe(1);
  });

  it('answers a retry selecting other fields with ONCELY_SELECTION_MISMATCH, running nothing', async () => {
    const first = await payOn(0, 'select-1', 5, pay('id fee'));
    expect(first.data).toEqual({ pay: { id: 'select-1', fee: 15 } });

    for (const fields of ['id fee amount', 'id', 'id cost: fee', 'fee id note']) {
      const other = await payOn(1, 'select-1', 5, pay(fields));
      expect(other.data ?? null).toBeNull();
      expect(codeOf(other)).toBe(OncelyGraphQLErrorCode.selectionMismatch);
      expect(other.errors?.[0]?.message).toMatch(/same selection set/);
    }
    const same = await payOn(1, 'select-1', 5, pay('fee id'));
    expect(same).toEqual(first);
    expect(ledger.feeReads.get('select-1')).toBe(1);
    expect(executions('select-1')).toBe(1);
    expect(await backends.effectRows('select-1')).toBe(1);
  });

  it('replays a field resolver’s error under the field as the first client received it', async () => {
    ledger.failNotes = true;
    const first = await payOn(0, 'note-1', 4, pay('id note'));
    expect(first.data).toEqual({ pay: { id: 'note-1', note: null } });
    expect(first.errors).toEqual([
      expect.objectContaining({ message: 'no note for note-1', path: ['pay', 'note'] }),
    ]);

    ledger.failNotes = false;
    const retry = await payOn(1, 'note-1', 4, pay('id note'));
    expect(retry).toEqual(first);
    expect(ledger.noteReads.get('note-1')).toBe(1);
    expect(executions('note-1')).toBe(1);
    expect(await backends.effectRows('note-1')).toBe(1);
  });

  it('runs 10 simultaneous duplicates once, and every one receives the same data', async () => {
    const key = { 'idempotency-key': 'settle-key-1' };
    const settle = `mutation Settle($amount: Int!) { settle(amount: $amount) { id execution fee } }`;
    const replies = Array.from({ length: 10 }, (_, i) =>
      graphql(i % 2, settle, { amount: 8 }, key),
    );
    await Promise.race(gates().map((gate) => gate.entered$('settle-8')));
    ledger.rate = 5;
    gates().forEach((gate) => gate.open('settle-8'));

    const expected = { data: { settle: { id: 'settle-8', execution: 1, fee: 40 } } };
    expect(await Promise.all(replies)).toEqual(Array.from({ length: 10 }, () => expected));
    expect(ledger.feeReads.get('settle-8')).toBe(1);
    expect(executions('settle-8')).toBe(1);
    expect(await backends.effectRows('settle-8')).toBe(1);
  });

  it('refuses a duplicate as in flight while the first response is still being resolved', async () => {
    const first = payOn(0, 'slow-1', 3, pay('id fee'));
    // `fee` runs once the mutation's record is complete: a duplicate finds the response's record
    // in flight rather than an answer without it.
    while (!ledger.feeReads.has('slow-1')) await sleep(5);
    const duplicate = await payOn(1, 'slow-1', 3, pay('id fee'));
    expect(codeOf(duplicate)).toBe(OncelyCallErrorCode.requestInFlight);
    expect((await first).data).toEqual({ pay: { id: 'slow-1', fee: 9 } });
    expect(await payOn(1, 'slow-1', 3, pay('id fee'))).toEqual(await first);
    expect(executions('slow-1')).toBe(1);
    expect(await backends.effectRows('slow-1')).toBe(1);
  });

  it('never runs the mutation again when its node dies before sending the response', async () => {
    const transfer = (node: number) =>
      graphql(
        node,
        `
          mutation T($input: PaymentInput!) {
            transfer(input: $input) {
              id
              fee
            }
          }
        `,
        {
          input: { requestId: 'held-1', amount: 7 },
        },
      );
    const first = transfer(2);
    await apps[2]!.get(Gates).entered$('fee:held-1');
    // The mutation's record is complete; the response is not sent yet. The node goes dark.
    severed.severed = true;

    const answers: unknown[] = [];
    for (let waited = 0; waited < 15_000; waited += 100) {
      const retry = await transfer(waited % 200 === 0 ? 0 : 1);
      answers.push(codeOf(retry));
      expect(retry.data ?? null).toBeNull();
      if (codeOf(retry) === OncelyGraphQLErrorCode.resultUnavailable) break;
      await sleep(100);
    }
    expect(answers.at(0)).toBe(OncelyCallErrorCode.requestInFlight);
    expect(answers.at(-1)).toBe(OncelyGraphQLErrorCode.resultUnavailable);
    expect(new Set(answers)).toEqual(
      new Set([OncelyCallErrorCode.requestInFlight, OncelyGraphQLErrorCode.resultUnavailable]),
    );

    // The first client still gets its answer; the answer to retries stays the same.
    apps[2]!.get(Gates).open('fee:held-1');
    expect((await first).data).toEqual({ transfer: { id: 'held-1', fee: 21 } });
    expect(codeOf(await transfer(1))).toBe(OncelyGraphQLErrorCode.resultUnavailable);
    expect(executions('held-1')).toBe(1);
    expect(await backends.effectRows('held-1')).toBe(1);
  });

  it('refuses an idempotent field on a server without the plugin, before running it', async () => {
    const refused = await payOn(3, 'bare-1', 2);
    expect(refused.data ?? null).toBeNull();
    expect(codeOf(refused)).toBe(OncelyGraphQLErrorCode.resultCaptureMissing);
    expect(executions('bare-1')).toBe(0);
    expect(await backends.effectRows('bare-1')).toBe(0);
  });
});
