import * as promClient from 'prom-client';
import { createPrometheusListener, InMemoryFlightCoordinator, SingleFlight } from '@oncely/core';

describe('createPrometheusListener', () => {
  let registry: promClient.Registry;

  beforeEach(() => {
    registry = new promClient.Registry();
  });

  async function value(metric: string, labels: Record<string, string>): Promise<number> {
    const found = await registry.getSingleMetric(metric)?.get();
    const sample = found?.values.find((entry) =>
      Object.entries(labels).every(([name, wanted]) => entry.labels[name] === wanted),
    );
    return sample?.value ?? 0;
  }

  it('counts every decision by mechanism, operation and outcome', async () => {
    const listen = createPrometheusListener(promClient, { registers: [registry] });
    const operation = 'shop:pay:v1';
    listen({ mechanism: 'idempotency', operation, key: 'k1', outcome: 'executed' });
    listen({ mechanism: 'idempotency', operation, key: 'k1', outcome: 'replayed' });
    listen({ mechanism: 'idempotency', operation, key: 'k1', outcome: 'replayed' });
    listen({ mechanism: 'single-flight', key: 'k2', outcome: 'joined' });

    const decisions = 'oncely_decisions_total';
    const idempotency = { mechanism: 'idempotency', operation };
    expect(await value(decisions, { ...idempotency, outcome: 'executed' })).toBe(1);
    expect(await value(decisions, { ...idempotency, outcome: 'replayed' })).toBe(2);
    expect(await value(decisions, { ...idempotency, outcome: 'mismatch' })).toBe(0);
    expect(
      await value(decisions, {
        mechanism: 'single-flight',
        operation: 'unknown',
        outcome: 'joined',
      }),
    ).toBe(1);
  });

  it('counts foreign owners by both services, beside the decision', async () => {
    const listen = createPrometheusListener(promClient, { registers: [registry] });
    const operation = 'shop:pay:v1';
    const foreign = {
      mechanism: 'idempotency',
      operation,
      key: 'k',
      outcome: 'foreign_owner',
    } as const;
    listen({ ...foreign, owner: 'billing-api', foreignOwner: 'orders-api' });
    listen({ ...foreign, owner: 'billing-api', foreignOwner: 'orders-api' });
    listen({ ...foreign, owner: 'orders-api', foreignOwner: 'billing-api' });
    listen({ mechanism: 'idempotency', operation, key: 'k', outcome: 'mismatch' });

    const foreignOwners = 'oncely_foreign_owner_total';
    const labels = { mechanism: 'idempotency', operation };
    expect(
      await value(foreignOwners, { ...labels, owner: 'billing-api', foreign_owner: 'orders-api' }),
    ).toBe(2);
    expect(
      await value(foreignOwners, { ...labels, owner: 'orders-api', foreign_owner: 'billing-api' }),
    ).toBe(1);
    const samples = (await registry.getSingleMetric(foreignOwners)?.get())?.values ?? [];
    expect(samples).toHaveLength(2);
    expect(await value('oncely_decisions_total', { ...labels, outcome: 'foreign_owner' })).toBe(3);
  });

  it('observes durations in seconds, only for events that carry one', async () => {
    const listen = createPrometheusListener(promClient, { registers: [registry] });
    const event = {
      mechanism: 'idempotency',
      operation: 'shop:pay:v1',
      outcome: 'executed',
    } as const;
    listen({ ...event, key: 'k', durationMs: 250 });
    listen({ ...event, key: 'k' });

    const durations = 'oncely_decision_duration_seconds';
    const histogram = registry.getSingleMetric(durations) as promClient.Histogram;
    const samples = (await histogram.get()).values;
    const sample = (name: string, le?: number) =>
      samples.find((entry) => entry.metricName === name && entry.labels.le === le)?.value;
    expect(sample(`${durations}_sum`)).toBe(0.25);
    expect(sample(`${durations}_count`)).toBe(1);
    expect(sample(`${durations}_bucket`, 0.1)).toBe(0);
    expect(sample(`${durations}_bucket`, 0.5)).toBe(1);
    expect(await value('oncely_decisions_total', event)).toBe(2);
  });

  it('names its metrics with the given prefix', async () => {
    const listen = createPrometheusListener(promClient, { registers: [registry], prefix: 'pay_' });
    listen({ mechanism: 'single-flight', key: 'k', outcome: 'executed' });

    expect((await registry.getMetricsAsJSON()).map((metric) => metric.name).sort()).toEqual([
      'pay_decision_duration_seconds',
      'pay_decisions_total',
      'pay_foreign_owner_total',
    ]);
  });

  it('counts the decisions of a real SingleFlight', async () => {
    const memory = new InMemoryFlightCoordinator();
    const flight = new SingleFlight(memory, {
      events: createPrometheusListener(promClient, { registers: [registry] }),
    });
    try {
      const operation = 'shop:report:v1';
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const work = async () => {
        await gate;
        return 'r';
      };
      const calls = [1, 2, 3].map(() => flight.run('report:1', work, { operation }));
      release();
      await Promise.all(calls);

      const decisions = 'oncely_decisions_total';
      const labels = { mechanism: 'single-flight', operation };
      expect(await value(decisions, { ...labels, outcome: 'executed' })).toBe(1);
      expect(await value(decisions, { ...labels, outcome: 'joined' })).toBe(2);
    } finally {
      await memory.close();
    }
  });
});
