import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Inject, type INestApplication } from '@nestjs/common';
import {
  Args,
  Field,
  GraphQLModule,
  Int,
  Mutation,
  ObjectType,
  Parent,
  Query,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import {
  IdempotentKey,
  OncelyCallErrorCode,
  OncelyGraphQLErrorCode,
  OncelyModule,
} from '@oncely/nestjs';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Executions, Gates } from '../fixtures/test-app.js';
import { SharedBackends, writeEffect } from '../support/shared-backends.js';

const SCHEMA = Symbol('schema');
const SOURCE = Symbol('source');

/** How long a duplicate of `place` waits for the first one's outcome. */
const WAIT_MS = 1_000;

@ObjectType()
class Order {
  @Field()
  id!: string;

  @Field(() => Int)
  amount!: number;

  @Field(() => Int)
  execution!: number;

  constructor(id: string, amount: number, execution: number) {
    Object.assign(this, { id, amount, execution });
  }
}

@Resolver(() => Order)
class OrdersResolver {
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

  /** Keyed by the Idempotency-Key header; a duplicate waits up to `WAIT_MS` for the first. */
  @Mutation(() => Order)
  @IdempotentKey({
    operation: 'order-place',
    scope: 'headers.x-tenant',
    onBusy: 'wait',
    wait: WAIT_MS,
  })
  async place(
    @Args('ref') ref: string,
    @Args('amount', { type: () => Int }) amount: number,
  ): Promise<Order> {
    if (ref.startsWith('held-')) await this.gates.pass(ref);
    const execution = this.executions.hit(ref);
    await writeEffect(this.source, this.schema, ref, amount);
    return new Order(ref, amount, execution);
  }

  /** Non-null, and fails the same way every time for an unpaid order. */
  @ResolveField(() => String)
  receipt(@Parent() order: Order): string {
    if (order.id.startsWith('unpaid-')) throw new Error(`no receipt for ${order.id}`);
    return `receipt of ${order.id}`;
  }
}

interface GraphQLError {
  message: string;
  path?: unknown[];
  extensions?: Record<string, unknown>;
}

interface GraphQLBody {
  data?: Record<string, Record<string, unknown> | null> | null;
  errors?: GraphQLError[];
}

const place = (alias: string, ref: string, amount: number, fields = 'id amount execution') =>
  `${alias}: place(ref: "${ref}", amount: ${amount}) { ${fields} }`;

describe('GraphQL: aliases of one idempotent mutation in one request (Apollo; Redis + PostgreSQL)', () => {
  const backends = new SharedBackends();
  let app!: INestApplication;

  beforeAll(async () => {
    await backends.start();
    const { options, source } = await backends.node();
    const module = await Test.createTestingModule({
      imports: [
        OncelyModule.forRoot(options),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      providers: [
        OrdersResolver,
        Executions,
        Gates,
        { provide: SOURCE, useValue: source },
        { provide: SCHEMA, useValue: backends.schema.name },
      ],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await backends.stop();
  });

  async function mutate(key: string, ...fields: string[]): Promise<GraphQLBody> {
    const response = await request(app.getHttpServer())
      .post('/graphql')
      .set({ 'x-tenant': 't-1', 'idempotency-key': key })
      .send({ query: `mutation { ${fields.join(' ')} }` });
    return response.body as GraphQLBody;
  }
  const executions = (ref: string) => app.get(Executions).of(ref);
  const effects = (ref: string) => backends.effectRows(ref);

  it('runs two aliases with identical arguments once, and both get the value', async () => {
    const started = Date.now();
    const first = await mutate('alias-key-1', place('a', 'twin-1', 5), place('b', 'twin-1', 5));
    const order = { id: 'twin-1', amount: 5, execution: 1 };
    expect(first).toEqual({ data: { a: order, b: order } });
    // Neither alias waited for a result that is only kept once the response is sent.
    expect(Date.now() - started).toBeLessThan(WAIT_MS);
    expect(executions('twin-1')).toBe(1);
    expect(await effects('twin-1')).toBe(1);
  });

  it('replays the same two-alias request and a single-alias retry, running nothing', async () => {
    const first = await mutate('alias-key-2', place('a', 'twin-2', 6), place('b', 'twin-2', 6));
    const order = { id: 'twin-2', amount: 6, execution: 1 };
    expect(first).toEqual({ data: { a: order, b: order } });

    expect(await mutate('alias-key-2', place('a', 'twin-2', 6), place('b', 'twin-2', 6))).toEqual(
      first,
    );
    expect(await mutate('alias-key-2', place('b', 'twin-2', 6))).toEqual({ data: { b: order } });
    expect(await mutate('alias-key-2', place('other', 'twin-2', 6))).toEqual({
      data: { other: order },
    });
    expect(executions('twin-2')).toBe(1);
    expect(await effects('twin-2')).toBe(1);
  });

  it('keeps the error of a non-null field resolver that failed and replays it as that error', async () => {
    const error = (alias: string) => ({
      message: 'no receipt for unpaid-1',
      path: [alias, 'receipt'],
      locations: expect.any(Array),
      extensions: expect.objectContaining({ code: 'INTERNAL_SERVER_ERROR' }),
    });
    const first = await mutate('alias-key-3', place('a', 'unpaid-1', 7, 'id receipt'));
    expect(first).toEqual({ data: null, errors: [error('a')] });

    expect(await mutate('alias-key-3', place('a', 'unpaid-1', 7, 'id receipt'))).toEqual(first);
    // Under another alias, the kept error is reported where the field now is.
    expect(await mutate('alias-key-3', place('c', 'unpaid-1', 7, 'id receipt'))).toEqual({
      data: null,
      errors: [error('c')],
    });
    expect(executions('unpaid-1')).toBe(1);
    expect(await effects('unpaid-1')).toBe(1);
  });

  it('replays the kept error of two identical aliases whose non-null field failed', async () => {
    const error = (alias: string) =>
      expect.objectContaining({ message: 'no receipt for unpaid-2', path: [alias, 'receipt'] });
    const twins = [
      place('a', 'unpaid-2', 8, 'id receipt'),
      place('b', 'unpaid-2', 8, 'id receipt'),
    ];
    // Once `a`'s error nulls `data`, graphql-js executes no further mutation field: `b` never ran.
    const first = await mutate('alias-key-4', ...twins);
    expect(first).toEqual({ data: null, errors: [error('a')] });
    expect(await mutate('alias-key-4', ...twins)).toEqual(first);
    expect(await mutate('alias-key-4', twins[1]!)).toEqual({ data: null, errors: [error('b')] });
    expect(executions('unpaid-2')).toBe(1);
    expect(await effects('unpaid-2')).toBe(1);
  });

  it('refuses an alias with other arguments under the same key with ONCELY_PAYLOAD_MISMATCH, never a bare null', async () => {
    const first = await mutate('alias-key-5', place('a', 'mixed-1', 1), place('b', 'mixed-1', 2));
    // `b` reuses the key with another payload: 422, as a retry with it would get. As `place` is
    // non-null, its error nulls `data`, and `a`'s value never reaches the client.
    expect(first.data).toBeNull();
    expect(first.errors).toEqual([
      expect.objectContaining({
        path: ['b'],
        extensions: expect.objectContaining({
          code: OncelyCallErrorCode.payloadMismatch,
          status: 422,
        }),
      }),
    ]);
    // `a` ran, but no value of it was sent: a retry learns that rather than get a bare null.
    const retry = await mutate('alias-key-5', place('a', 'mixed-1', 1));
    expect(retry.data).toBeNull();
    expect(retry.errors).toEqual([
      expect.objectContaining({
        path: ['a'],
        extensions: expect.objectContaining({ code: OncelyGraphQLErrorCode.resultUnavailable }),
      }),
    ]);
    expect(executions('mixed-1')).toBe(1);
    expect(await effects('mixed-1')).toBe(1);
  });

  it('refuses a duplicate still in flight after the wait without suggesting onBusy: wait', async () => {
    const gates = app.get(Gates);
    const first = mutate('alias-key-6', place('a', 'held-1', 3));
    try {
      await gates.entered$('held-1');
      const duplicate = await mutate('alias-key-6', place('a', 'held-1', 3));
      expect(duplicate.data).toBeNull();
      expect(duplicate.errors).toEqual([
        expect.objectContaining({
          path: ['a'],
          message: `OrdersResolver.place (resolver) is still running under this idempotency key: this request waited 1000 ms (onBusy: 'wait', wait: 1000) without receiving its outcome. Retry after extensions.retryAfterMs to receive it, or raise wait on the route if duplicates should wait longer.`,
          extensions: expect.objectContaining({
            code: OncelyCallErrorCode.requestInFlight,
            status: 409,
            retryAfterMs: expect.any(Number),
          }),
        }),
      ]);
    } finally {
      gates.open('held-1');
    }
    const order = { id: 'held-1', amount: 3, execution: 1 };
    expect(await first).toEqual({ data: { a: order } });
    expect(executions('held-1')).toBe(1);
    expect(await effects('held-1')).toBe(1);
  });
});
