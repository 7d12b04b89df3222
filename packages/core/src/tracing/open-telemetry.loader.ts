import { types } from 'node:util';
import type { CallTracer } from './call-tracer.port.js';
import { createOpenTelemetryTracer, type OpenTelemetryApi } from './open-telemetry-call.tracer.js';
import { OpenTelemetryLoadError } from './open-telemetry-load.error.js';

const API = '@opentelemetry/api';

/**
 * A tracer over OpenTelemetry's API if the app has `@opentelemetry/api` installed (an optional
 * peer of this package), `undefined` if it has not. Loaded with `import()`, which the CommonJS
 * build compiles to `require`: either way the one API module of the app is found, and nothing
 * of it is loaded or paid for by an app without it. Rejects with `OpenTelemetryLoadError` when
 * the API is installed but unusable.
 */
export async function loadOpenTelemetryTracer(owner: string): Promise<CallTracer | undefined> {
  let loaded: Partial<OpenTelemetryApi> & { default?: Partial<OpenTelemetryApi> };
  try {
    loaded = await import('@opentelemetry/api');
  } catch (error) {
    if (isApiNotInstalled(error)) return undefined;
    const reason = types.isNativeError(error) ? error.message : String(error);
    throw new OpenTelemetryLoadError(owner, reason, { cause: error });
  }
  // A CommonJS module imported as ESM may show its exports on `default` only.
  const api = loaded.trace ? loaded : loaded.default;
  if (!isOpenTelemetryApi(api)) {
    throw new OpenTelemetryLoadError(
      owner,
      'it has no trace API (trace, SpanKind, SpanStatusCode)',
    );
  }
  return createOpenTelemetryTracer(api);
}

/**
 * The API itself is missing, not a file it needs: the module name is quoted as imported. The
 * error may come from another realm (Jest's module registry throws its own), where it is no
 * `instanceof Error`: `isNativeError` tells either way.
 */
function isApiNotInstalled(error: unknown): boolean {
  if (!types.isNativeError(error)) return false;
  const { code } = error as { code?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    error.message.includes(`'${API}'`)
  );
}

function isOpenTelemetryApi(api: Partial<OpenTelemetryApi> | undefined): api is OpenTelemetryApi {
  return (
    typeof api?.trace?.getTracer === 'function' &&
    typeof api.trace.getTracerProvider === 'function' &&
    typeof api.SpanKind?.INTERNAL === 'number' &&
    typeof api.SpanStatusCode?.ERROR === 'number'
  );
}
