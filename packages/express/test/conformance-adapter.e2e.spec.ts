import { ProblemType } from '@oncely/core';
import { ConformanceClient, ConformanceProbe, type ConformanceApp } from '@oncely/core/testing';
import express from 'express';
import { randomUUID } from 'node:crypto';
import { expressHarness, type ExpressMajor } from './conformance/express-harness.js';

/** What only Express expresses: both middleware stacked on one route. */
describe('Express-only HTTP behaviour, on the conformance fixture app', () => {
  const probe = new ConformanceProbe();
  let app: ConformanceApp;
  let http: ConformanceClient;

  beforeAll(async () => {
    app = await expressHarness('Express 5', express as ExpressMajor).start({
      probe,
      namespace: `adapter-${randomUUID().slice(0, 8)}`,
      catchAll: 'error-handling middleware',
      serializer: 'response-shaping middleware',
      timeoutLayer: false,
    });
    http = new ConformanceClient(app);
  });

  afterAll(async () => {
    probe.openAll();
    await app.close();
  });

  it('combines both middleware: different keys share one flight, each key replays its own record', async () => {
    const doc = randomUUID();
    const keys = Array.from({ length: 5 }, () => randomUUID());
    const summarize = (key: string | undefined, model: string) =>
      http.post(`/summaries/${doc}`, { key, tenant: 't-1', body: { model } });
    const calls = keys.map((key) => summarize(key, 'm-1'));
    await probe.entered(`summary:${doc}`);
    probe.open(`summary:${doc}`);
    const responses = await Promise.all(calls);
    expect(probe.executions(`summary:${doc}`)).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(5).fill(201));
    expect(new Set(responses.map((r) => r.body?.summary)).size).toBe(1);

    const replay = await summarize(keys[2], 'm-1');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(responses[2]?.text);
    const mismatch = await summarize(keys[2], 'm-2');
    expect(mismatch.status).toBe(422);
    expect(mismatch.body?.type).toBe(ProblemType.payloadMismatch);
    expect(probe.executions(`summary:${doc}`)).toBe(1);
  });
});
