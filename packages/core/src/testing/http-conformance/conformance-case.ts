import { randomUUID } from 'node:crypto';
import { ConformanceClient } from './conformance-client.js';
import type {
  ConformanceApp,
  ConformanceAppSettings,
  HttpConformanceCapability,
  HttpConformanceHarness,
  HttpConformanceTag,
} from './conformance-harness.js';
import { ConformanceProbe } from './conformance-probe.js';

/** What a case body gets: a fresh app, its probe and a client speaking to it. */
export interface CaseContext {
  readonly app: ConformanceApp;
  readonly probe: ConformanceProbe;
  readonly http: ConformanceClient;
  readonly harness: HttpConformanceHarness;
}

/** A case as the topic files declare it, before the suite binds it to a harness. */
export interface CaseDefinition {
  readonly name: string;
  readonly needs?: readonly HttpConformanceCapability[];
  /** What a runner taking only part of the suite may select the case by. */
  readonly tags?: readonly HttpConformanceTag[];
  /** App settings besides the defaults (catch-all: the harness's first registration). */
  readonly settings?: Partial<Omit<ConformanceAppSettings, 'probe' | 'namespace'>>;
  /** Run once per catch-all registration of the harness, the name saying which. */
  readonly perCatchAll?: boolean;
  /** Run once per serializer registration of the harness, the name saying which. */
  readonly perSerializer?: boolean;
  /** Cases that expect `start` itself to fail get the harness and the settings instead. */
  readonly boot?: (
    harness: HttpConformanceHarness,
    settings: ConformanceAppSettings,
  ) => Promise<void>;
  readonly run?: (context: CaseContext) => Promise<void>;
}

export function conformanceSettings(
  harness: HttpConformanceHarness,
  overrides: CaseDefinition['settings'] = {},
): ConformanceAppSettings {
  return {
    probe: new ConformanceProbe(),
    namespace: `conf-${randomUUID().slice(0, 8)}`,
    catchAll: harness.catchAllRegistrations[0] ?? 'default',
    serializer: harness.serializerRegistrations[0] ?? 'default',
    timeoutLayer: false,
    ...overrides,
  };
}

/** Starts a fresh app for the case, runs it, and always opens the gates and stops the app. */
export async function runCase(
  harness: HttpConformanceHarness,
  definition: CaseDefinition,
  overrides: CaseDefinition['settings'] = {},
): Promise<void> {
  const settings = conformanceSettings(harness, { ...definition.settings, ...overrides });
  if (definition.boot) {
    await definition.boot(harness, settings);
    return;
  }
  const app = await harness.start(settings);
  try {
    await definition.run?.({
      app,
      probe: settings.probe,
      http: new ConformanceClient(app),
      harness,
    });
  } finally {
    settings.probe.openAll();
    await app.close();
  }
}

/** Tries `attempt` until `done` says yes, `attempts` times at most, pausing `pauseMs` between. */
export async function eventually<T>(
  attempt: () => Promise<T>,
  done: (value: T) => boolean,
  { attempts = 100, pauseMs = 50 } = {},
): Promise<T> {
  let value = await attempt();
  for (let tried = 1; tried < attempts && !done(value); tried += 1) {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    value = await attempt();
  }
  return value;
}

/** An order body as the fixture validates it. */
export const order = (customer = 'c-1') => ({
  customer,
  lines: [{ sku: 'sku-1', quantity: 2 }],
});

/**
 * Sends a slow order and, once its handler runs, the same request again: the duplicate that
 * meets it in flight. `send` repeats the request; `release` lets the first one finish.
 */
export async function duplicateWhileInFlight({ http, probe }: CaseContext, label: string) {
  const key = randomUUID();
  const customer = `${label}-${randomUUID()}`;
  const send = () => http.post('/orders/slow', { key, tenant: 't-1', body: order(customer) });
  const first = send();
  await probe.entered(`slow:${customer}`);
  const duplicate = await send();
  return { first, duplicate, send, release: () => probe.open(`slow:${customer}`) };
}
