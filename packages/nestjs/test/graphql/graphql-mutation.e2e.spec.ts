import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Inject, type INestApplication } from '@nestjs/common';
import {
  Args,
  Field,
  InputType,
  Int,
  Mutation,
  ObjectType,
  Query,
  Resolver,
} from '@nestjs/graphql';
import { GraphQLModule } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import {
  IdempotentKey,
  OncelyCallErrorCode,
  OncelyGraphQLPlugin,
  OncelyModule,
} from '@oncely/nestjs';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Executions, Gates } from '../fixtures/test-app.js';
import { SharedBackends, writeEffect } from '../support/shared-backends.js';

const SCHEMA = Symbol('schema');
const SOURCE = Symbol('source');

@InputType()
class CreatePaymentInput {
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
}

@Resolver(() => Payment)
class PaymentsResolver {
  constructor(
    @Inject(Executions) private readonly executions: Executions,
    @Inject(Gates) private readonly gates: Gates,
    @Inject(SOURCE) private readonly source: DataSource,
    @Inject(SCHEMA) private readonly schema: string,
  ) {}

  @Query(() => String)
  health(): string {
    return 'ok';
  }

  /** Keyed by an argument: the client's request id, within the tenant. */
  @Mutation(() => Payment)
  @IdempotentKey({
    operation: 'payment-create',
    scope: 'headers.x-tenant',
    target: 'body.input.requestId',
    input: ['body.input'],
    idempotencyKey: 'ignored',
  })
  async createPayment(
    @Args('input', { type: () => CreatePaymentInput }) input: CreatePaymentInput,
  ): Promise<Payment> {
    const execution = this.executions.hit(`pay:${input.requestId}`);
    await this.gates.pass(input.requestId);
    await writeEffect(this.source, this.schema, input.requestId, input.amount);
    return { id: `pay-${input.requestId}`, amount: input.amount, execution };
  }

  /** Keyed by the Idempotency-Key header, combined with the tenant. */
  @Mutation(() => Payment)
  @IdempotentKey({ operation: 'payment-refund', scope: 'headers.x-tenant', onBusy: 'wait' })
  async refundPayment(@Args('amount', { type: () => Int }) amount: number): Promise<Payment> {
    const execution = this.executions.hit(`refund:${amount}`);
    await writeEffect(this.source, this.schema, `refund-${amount}`, -amount);
    return { id: `refund-${amount}`, amount, execution };
  }
}

const CREATE = `mutation Create($input: CreatePaymentInput!) {
  createPayment(input: $input) { id amount execution }
}`;
const REFUND = `mutation Refund($amount: Int!) { refundPayment(amount: $amount) { id amount execution } }`;

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

describe('GraphQL mutations (Apollo, code-first; Redis + PostgreSQL, two nodes)', () => {
  const backends = new SharedBackends();
  const nodes: INestApplication[] = [];

  beforeAll(async () => {
    await backends.start();
    for (let i = 0; i < 2; i++) {
      const { options, source } = await backends.node();
      const module = await Test.createTestingModule({
        imports: [
          OncelyModule.forRoot(options),
          // One node lists the plugin, the other has Nest's Apollo driver find it as a provider.
          GraphQLModule.forRoot<ApolloDriverConfig>({
            driver: ApolloDriver,
            autoSchemaFile: true,
            plugins: i === 0 ? [new OncelyGraphQLPlugin()] : [],
          }),
        ],
        providers: [
          ...(i === 0 ? [] : [OncelyGraphQLPlugin]),
          PaymentsResolver,
          Executions,
          Gates,
          { provide: SOURCE, useValue: source },
          { provide: SCHEMA, useValue: backends.schema.name },
        ],
      }).compile();
      const app = module.createNestApplication({ logger: false });
      await app.init();
      nodes.push(app);
    }
  });

  afterAll(async () => {
    await Promise.allSettled(nodes.map((node) => node.close()));
    await backends.stop();
  });

  const executions = (name: string) =>
    nodes.reduce((sum, node) => sum + node.get(Executions).of(name), 0);
  const openGate = (name: string) => nodes.forEach((node) => node.get(Gates).open(name));
  const entered = (name: string) =>
    Promise.race(nodes.map((node) => node.get(Gates).entered$(name)));

  async function graphql(
    node: number,
    query: string,
    variables: object,
    headers: Record<string, string> = {},
  ): Promise<GraphQLBody> {
    const response = await request(nodes[node]!.getHttpServer())
      .post('/graphql')
      .set({ 'x-tenant': 't-1', ...headers })
      .send({ query, variables });
    return response.body as GraphQLBody;
  }
  const create = (node: number, requestId: string, amount: number, tenant = 't-1') =>
    graphql(node, CREATE, { input: { requestId, amount } }, { 'x-tenant': tenant });
  const codeOf = (body: GraphQLBody) => body.errors?.[0]?.extensions?.code;

  it('refuses duplicates in flight with ONCELY_REQUEST_IN_FLIGHT and runs the mutation once', async () => {
    const first = create(0, 'req-1', 50);
    await entered('req-1');
    const duplicates = await Promise.all([create(1, 'req-1', 50), create(0, 'req-1', 50)]);
    for (const duplicate of duplicates) {
      expect(codeOf(duplicate)).toBe(OncelyCallErrorCode.requestInFlight);
      expect(duplicate.errors?.[0]?.extensions?.retryAfterMs).toEqual(expect.any(Number));
    }
    openGate('req-1');
    expect((await first).data).toEqual({
      createPayment: { id: 'pay-req-1', amount: 50, execution: 1 },
    });
    expect(executions('pay:req-1')).toBe(1);
    expect(await backends.effectRows('req-1')).toBe(1);
  });

  it('replays a retried mutation with the stored result', async () => {
    openGate('req-2');
    const first = await create(0, 'req-2', 20);
    const retries = await Promise.all([create(1, 'req-2', 20), create(0, 'req-2', 20)]);
    expect(retries.map((r) => r.data)).toEqual([first.data, first.data]);
    expect(first.data).toEqual({ createPayment: { id: 'pay-req-2', amount: 20, execution: 1 } });
    expect(executions('pay:req-2')).toBe(1);
    expect(await backends.effectRows('req-2')).toBe(1);
  });

  it('answers a reused request id with another input with ONCELY_PAYLOAD_MISMATCH', async () => {
    openGate('req-3');
    await create(0, 'req-3', 30);
    const mismatch = await create(1, 'req-3', 31);
    expect(mismatch.data ?? null).toBeNull();
    expect(codeOf(mismatch)).toBe(OncelyCallErrorCode.payloadMismatch);
    expect(executions('pay:req-3')).toBe(1);
    expect(await backends.effectRows('req-3')).toBe(1);
  });

  it('keeps tenants apart: the same request id in another tenant is another payment', async () => {
    openGate('req-4');
    await create(0, 'req-4', 40, 't-1');
    await create(1, 'req-4', 40, 't-2');
    expect(executions('pay:req-4')).toBe(2);
    expect(await backends.effectRows('req-4')).toBe(2);
  });

  it('keys a mutation by the Idempotency-Key header and requires it', async () => {
    const key = { 'idempotency-key': 'refund-key-1' };
    const replies = await Promise.all([
      graphql(0, REFUND, { amount: 7 }, key),
      graphql(1, REFUND, { amount: 7 }, key),
      graphql(0, REFUND, { amount: 7 }, key),
    ]);
    const expected = { refundPayment: { id: 'refund-7', amount: 7, execution: 1 } };
    expect(replies.map((r) => r.data)).toEqual([expected, expected, expected]);
    expect(executions('refund:7')).toBe(1);
    expect(await backends.effectRows('refund-7')).toBe(1);
    const missing = await graphql(0, REFUND, { amount: 8 });
    expect(codeOf(missing)).toBe(OncelyCallErrorCode.idempotencyKeyMissing);
    expect(executions('refund:8')).toBe(0);
  });
});
