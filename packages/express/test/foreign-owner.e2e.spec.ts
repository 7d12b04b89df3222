import { ProblemType, type OncelyEvent } from '@oncely/core';
import type { Oncely } from '@oncely/express';
import express, { type Express } from 'express';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { redisPostgresBackend } from './fixtures/backends.js';

/** One service's app: a `@SingleFlight` report route that finds no report (404, kept `errorTtl`). */
interface ReportService {
  readonly app: Express;
  readonly runs: () => number;
  readonly events: OncelyEvent[];
}

/**
 * Apps of two services with one namespace on the same Redis: the 404 a route of one service keeps
 * for `errorTtl` is that service's answer, refused to the other with the foreign-owner problem
 * as its cached results and its leases are, and served to a service that names it an alias.
 */
describe('SingleFlight errors kept by one service on a Redis shared with another', () => {
  const backend = redisPostgresBackend();
  const opened: Oncely[] = [];

  beforeAll(() => backend.start());
  afterAll(async () => {
    await Promise.all(opened.map((oncely) => oncely.close()));
    await backend.stop();
  });

  async function reportService(
    service: string,
    serviceAliases?: readonly string[],
  ): Promise<ReportService> {
    const events: OncelyEvent[] = [];
    const oncely = await backend.oncely({
      service,
      ...(serviceAliases && { serviceAliases }),
      events: (event: OncelyEvent) => events.push(event),
    });
    opened.push(oncely);
    let runs = 0;
    const app = express();
    app.get(
      '/reports/:id',
      oncely.singleFlight({
        operation: 'report',
        target: 'params.id',
        input: [],
        errorTtl: 60_000,
      }),
      (req, res) => {
        runs += 1;
        res.status(404).json({ detail: `report ${String(req.params.id)} of ${service} not found` });
      },
    );
    return { app, runs: () => runs, events };
  }

  const report = (service: ReportService, id: string) =>
    request(service.app)
      .get(`/reports/${id}`)
      .then((response) => response);

  it('refuses the error kept by orders-api to billing-api with 409 foreign-owner, running nothing, and still answers it to orders-api', async () => {
    const orders = await reportService('orders-api');
    const billing = await reportService('billing-api');
    const id = randomUUID();

    const kept = await report(orders, id);
    const refused = await Promise.all([report(billing, id), report(billing, id)]);
    const again = await report(orders, id);

    expect([kept.status, kept.body]).toEqual([
      404,
      { detail: `report ${id} of orders-api not found` },
    ]);
    for (const answer of refused) {
      expect(answer.status).toBe(409);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ type: ProblemType.foreignOwner, status: 409 });
      expect(JSON.stringify(answer.body)).not.toContain('not found');
    }
    expect([again.status, again.headers['idempotent-replayed'], again.body]).toEqual([
      404,
      'true',
      { detail: `report ${id} of orders-api not found` },
    ]);
    expect([orders.runs(), billing.runs()]).toEqual([1, 0]);
    expect(
      billing.events.map(({ mechanism, outcome, owner, foreignOwner }) => [
        mechanism,
        outcome,
        owner,
        foreignOwner,
      ]),
    ).toEqual([
      ['single-flight', 'foreign_owner', 'billing-api', 'orders-api'],
      ['single-flight', 'foreign_owner', 'billing-api', 'orders-api'],
    ]);
  });

  it('serves the error kept by orders-api to a service that names it in serviceAliases', async () => {
    const orders = await reportService('orders-api');
    const renamed = await reportService('orders-service', ['orders-api']);
    const id = randomUUID();

    await report(orders, id);
    const served = await report(renamed, id);

    expect([served.status, served.headers['idempotent-replayed'], served.body]).toEqual([
      404,
      'true',
      { detail: `report ${id} of orders-api not found` },
    ]);
    expect([orders.runs(), renamed.runs()]).toEqual([1, 0]);
  });
});
