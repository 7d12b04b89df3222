import { bootCases } from './boot.cases.js';
import { catchAllCases } from './catch-all.cases.js';
import { runCase, type CaseDefinition } from './conformance-case.js';
import type {
  HttpConformanceCase,
  HttpConformanceHarness,
  HttpConformanceSelection,
  HttpConformanceSuite,
} from './conformance-harness.js';
import { encryptedStorageCases } from './encrypted-storage.cases.js';
import { heldKeyCases } from './held-key.cases.js';
import { hostileInputCases } from './hostile-input.cases.js';
import { idempotencyCases } from './idempotency.cases.js';
import { rawResponseCases } from './raw-response.cases.js';
import { readMethodCases } from './read-method.cases.js';
import { replayHeaderCases } from './replay-headers.cases.js';
import { scopeIdentityCases } from './scope-identity.cases.js';
import { serializerCases } from './serializer.cases.js';
import { singleFlightCases } from './single-flight.cases.js';
import { statusCases } from './status.cases.js';
import { uploadCases } from './upload.cases.js';
import { validationCases } from './validation.cases.js';

/**
 * Every case of the suite, by topic; `httpConformanceSuite` binds them to a harness.
 *
 * @internal
 */
export const HTTP_CONFORMANCE_CASES: readonly CaseDefinition[] = [
  ...idempotencyCases,
  ...replayHeaderCases,
  ...validationCases,
  ...statusCases,
  ...singleFlightCases,
  ...readMethodCases,
  ...uploadCases,
  ...serializerCases,
  ...heldKeyCases,
  ...rawResponseCases,
  ...catchAllCases,
  ...scopeIdentityCases,
  ...bootCases,
  ...hostileInputCases,
  ...encryptedStorageCases,
];

/**
 * The HTTP behaviour every oncely integration must show, as named async cases for any test
 * runner. Each case starts a fresh app from the harness (see `HttpConformanceHarness` for the
 * fixture contract), speaks HTTP to it with `fetch`, and asserts with `node:assert`. Cases the
 * harness cannot express are listed in `leftOut` with what they need, not run. With
 * `selection.tags`, only the cases carrying one of those tags are considered.
 */
export function httpConformanceSuite(
  harness: HttpConformanceHarness,
  selection: HttpConformanceSelection = {},
): HttpConformanceSuite {
  const cases: HttpConformanceCase[] = [];
  const leftOut: { name: string; needs: string[] }[] = [];
  const { tags } = selection;
  const selected = HTTP_CONFORMANCE_CASES.filter(
    (definition) => !tags || definition.tags?.some((tag) => tags.includes(tag)),
  );
  for (const definition of selected) {
    const missing = (definition.needs ?? []).filter((need) => !harness.capabilities.includes(need));
    if (missing.length > 0) {
      leftOut.push({ name: definition.name, needs: missing });
      continue;
    }
    if (definition.perSerializer) {
      for (const serializer of harness.serializerRegistrations) {
        cases.push({
          name: `${definition.name} (serializer as ${serializer})`,
          run: () => runCase(harness, definition, { serializer }),
        });
      }
      continue;
    }
    if (definition.perCatchAll) {
      for (const catchAll of harness.catchAllRegistrations) {
        cases.push({
          name: `${definition.name} (catch-all via ${catchAll})`,
          run: () => runCase(harness, definition, { catchAll }),
        });
      }
      continue;
    }
    cases.push({ name: definition.name, run: () => runCase(harness, definition) });
  }
  return { cases, leftOut };
}
