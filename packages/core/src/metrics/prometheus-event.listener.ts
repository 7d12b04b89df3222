import type { OncelyEvent, OncelyEventListener } from '../events/oncely-event.js';

/** The parts of `prom-client` the exporter uses; pass the module itself (`import * as client`). */
export interface PrometheusClient {
  /** prom-client's `Counter` class: counts decisions. */
  Counter: {
    /** Registers one counter metric, labelled by mechanism, operation and outcome. */
    new (configuration: {
      name: string;
      help: string;
      labelNames: readonly string[];
      // prom-client wants its own Registry type here; any keeps it out of core's dependencies.
      registers?: any[];
    }): {
      /** Adds `value` (default 1) to the series of `labels`. */
      inc(labels: Record<string, string>, value?: number): void;
    };
  };
  /** prom-client's `Histogram` class: times decisions. */
  Histogram: {
    /** Registers one histogram metric, labelled like the counter. */
    new (configuration: {
      name: string;
      help: string;
      labelNames: readonly string[];
      buckets?: number[];
      // prom-client wants its own Registry type here; any keeps it out of core's dependencies.
      registers?: any[];
    }): {
      /** Records one observation, in seconds, in the series of `labels`. */
      observe(labels: Record<string, string>, value: number): void;
    };
  };
}

/** Options of `createPrometheusListener`. */
export interface PrometheusListenerOptions {
  /** Registries to register the metrics in; prom-client's global registry when omitted. */
  readonly registers?: any[];
  /** Metric name prefix; default `oncely_`. */
  readonly prefix?: string;
}

/**
 * An event listener exporting oncely's decisions to Prometheus: `oncely_decisions_total` by
 * mechanism, operation and outcome, `oncely_decision_duration_seconds`, and
 * `oncely_foreign_owner_total` by operation, `owner` and `foreign_owner`: a call that met a
 * record of another service, the alarm that two services share a key space (alert on any
 * increase). Works with any
 * adapter's `events` option (Nest or Express). The app passes its own `prom-client` module, so
 * oncely never imports it and it stays the app's dependency.
 *
 * ```ts
 * import * as promClient from 'prom-client';
 * createOncely({ namespace: 'shop', events: createPrometheusListener(promClient) });
 * ```
 */
export function createPrometheusListener(
  client: PrometheusClient,
  options: PrometheusListenerOptions = {},
): OncelyEventListener {
  const prefix = options.prefix ?? 'oncely_';
  const registers = options.registers ? { registers: options.registers } : {};
  const labelNames = ['mechanism', 'operation', 'outcome'] as const;
  const decisions = new client.Counter({
    name: `${prefix}decisions_total`,
    help: 'Decisions taken by oncely (executed, joined, shared, cached, replayed, conflict, mismatch, foreign_owner, foreign_claim, refused, lease_lost, coordinator_down, failed).',
    labelNames,
    ...registers,
  });
  const durations = new client.Histogram({
    name: `${prefix}decision_duration_seconds`,
    help: 'Time from the start of a protected call to its decision.',
    labelNames,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    ...registers,
  });
  const foreignOwners = new client.Counter({
    name: `${prefix}foreign_owner_total`,
    help: 'Calls that met a record of another service under their key: two services share a key space.',
    labelNames: ['mechanism', 'operation', 'owner', 'foreign_owner'],
    ...registers,
  });
  return (event: OncelyEvent) => {
    const labels = {
      mechanism: event.mechanism,
      operation: event.operation ?? 'unknown',
      outcome: event.outcome,
    };
    decisions.inc(labels);
    if (event.outcome === 'foreign_owner') {
      foreignOwners.inc({
        mechanism: event.mechanism,
        operation: labels.operation,
        owner: event.owner ?? 'unknown',
        foreign_owner: event.foreignOwner ?? 'unknown',
      });
    }
    if (event.durationMs !== undefined) durations.observe(labels, event.durationMs / 1000);
  };
}
