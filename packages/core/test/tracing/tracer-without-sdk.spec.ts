import * as otel from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createOncelyEngine, createOpenTelemetryTracer, type OncelyEngine } from '@oncely/core';
import { resolveCallKeys, type HttpResponse } from '@oncely/core/adapter';
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

let engine: OncelyEngine | undefined;
afterAll(async () => {
  await engine?.close();
  await provider.shutdown();
  otel.trace.disable();
});

const ok = async (): Promise<HttpResponse> => ({
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value: { ok: true } },
});

describe('the OpenTelemetry API installed without an SDK', () => {
  it('starts no span until an SDK registers a global provider, then traces every call', async () => {
    const tracer = createOpenTelemetryTracer(otel);
    const inSpan = jest.spyOn(tracer, 'inSpan');
    engine = createOncelyEngine({
      namespace: `nosdk-${randomUUID().slice(0, 8)}`,
      tracing: tracer,
    });
    await engine.start();
    const route = engine.defineRoute('Orders.create', { singleFlight: { operation: 'order' } });
    const call = () =>
      engine!.executor.execute({
        route,
        keys: resolveCallKeys(route, { body: { sku: randomUUID() } }),
        handler: ok,
      });

    expect(tracer.enabled?.()).toBe(false);
    expect((await call()).response.status).toBe(201);
    expect(inSpan).not.toHaveBeenCalled();

    otel.trace.setGlobalTracerProvider(provider);
    expect(tracer.enabled?.()).toBe(true);
    await call();
    await call();
    expect(inSpan).toHaveBeenCalledTimes(2);
    const name = `oncely ${route.singleFlight!.operation}`;
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual([name, name]);
  });

  it('starts no span for a proxy provider given with nothing behind it', () => {
    const tracer = createOpenTelemetryTracer(otel, {
      tracerProvider: new otel.ProxyTracerProvider(),
    });
    expect(tracer.enabled?.()).toBe(false);
  });

  it('always traces through a provider of the app’s own', () => {
    const tracer = createOpenTelemetryTracer(otel, { tracerProvider: provider });
    expect(tracer.enabled?.()).toBe(true);
  });
});
