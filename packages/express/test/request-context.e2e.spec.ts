import { ProblemType, SharedFlightError } from '@oncely/core';
import { createOncely, getOncelyContext, type Oncely } from '@oncely/express';
import express, { type ErrorRequestHandler, type Express } from 'express';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { uniqueNamespace } from './fixtures/backends.js';
import { Executions, Gates } from './fixtures/gates.js';

describe('principal, handler context and raw responses (in-memory defaults)', () => {
  let oncely: Oncely;
  let app: Express;
  const executions = new Executions();
  const gates = new Gates();
  const errors: unknown[] = [];

  beforeAll(() => {
    oncely = createOncely({
      namespace: uniqueNamespace('ctx'),
      resolveUser: (req) => {
        const tenant = req.get('x-auth-tenant');
        return tenant ? { tenantId: tenant } : undefined;
      },
    });
    app = express();
    app.use(express.json());

    app.post(
      '/payments',
      oncely.idempotent({ operation: 'payment', scope: 'user.tenantId', missingUserStatus: 401 }),
      (req, res) => {
        const context = getOncelyContext(req);
        res.status(201).json({
          execution: executions.hit('payment'),
          hasSignal: context?.signal instanceof AbortSignal,
        });
      },
    );

    app.post(
      '/raw',
      oncely.idempotent({ operation: 'raw', scope: 'user.tenantId' }),
      (_req, res) => {
        const execution = executions.hit('raw');
        res.writeHead(202, { 'content-type': 'text/plain; charset=utf-8', etag: '"raw"' });
        res.end(`accepted ${execution}`);
      },
    );

    app.get(
      '/quotes/:id',
      oncely.singleFlight({ operation: 'quote', target: 'params.id', input: [], errorTtl: 60_000 }),
      async (req) => {
        const id = req.params.id as string;
        executions.hit(`quote:${id}`);
        await gates.pass(`quote:${id}`);
        throw Object.assign(new Error(`no quote for ${id}`), { status: 404 });
      },
    );

    const errorHandler: ErrorRequestHandler = (error, _req, res, _next) => {
      errors.push(error);
      res
        .status((error as { status?: number }).status ?? 500)
        .json({ error: (error as Error).message });
    };
    app.use(errorHandler);
  });

  afterAll(async () => {
    await oncely.close();
  });

  it('reads user.* from resolveUser, and answers 401 when the route says so', async () => {
    const key = randomUUID();
    const anonymous = await request(app).post('/payments').set('idempotency-key', key).send({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.type).toBe(ProblemType.unauthenticated);

    const first = await request(app)
      .post('/payments')
      .set('idempotency-key', key)
      .set('x-auth-tenant', 'acme')
      .send({});
    expect(first.status).toBe(201);
    expect(first.body.hasSignal).toBe(true);
    const otherTenant = await request(app)
      .post('/payments')
      .set('idempotency-key', key)
      .set('x-auth-tenant', 'globex')
      .send({});
    expect(otherTenant.headers['idempotent-replayed']).toBeUndefined();
    expect(executions.of('payment')).toBe(2);
  });

  it('keeps a response written with writeHead and end, and replays it', async () => {
    const key = randomUUID();
    const send = () =>
      request(app).post('/raw').set('idempotency-key', key).set('x-auth-tenant', 'acme').send({});
    const first = await send();
    const replay = await send();
    expect(first.status).toBe(202);
    expect(first.text).toBe('accepted 1');
    expect(replay.status).toBe(202);
    expect(replay.text).toBe('accepted 1');
    expect(replay.headers.etag).toBe('"raw"');
    expect(replay.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it("shares a thrown deterministic 4xx with a SingleFlight route's concurrent callers", async () => {
    const id = randomUUID();
    const calls = Array.from({ length: 5 }, () =>
      request(app)
        .get(`/quotes/${id}`)
        .then((r) => r),
    );
    await gates.entered(`quote:${id}`);
    gates.open(`quote:${id}`);
    const responses = await Promise.all(calls);
    expect(responses.map((r) => r.status)).toEqual(Array(5).fill(404));
    expect(new Set(responses.map((r) => r.body.error))).toEqual(new Set([`no quote for ${id}`]));
    expect(executions.of(`quote:${id}`)).toBe(1);
    // Cached for errorTtl: a caller right after gets it too, without an execution.
    const after = await request(app).get(`/quotes/${id}`);
    expect(after.status).toBe(404);
    expect(executions.of(`quote:${id}`)).toBe(1);
    expect(errors.some((error) => error instanceof SharedFlightError)).toBe(true);
  });
});
