export {
  createOncelyEngine,
  type OncelyEngine,
  type ProtectedRouteDeclaration,
} from './oncely-engine.js';
export type { OncelyEngineOptions } from './oncely-engine.options.js';
export { requireFunction } from './option-checks.js';
export { createProtectionEngines, type ProtectionEnginesOptions } from './protection-engines.js';
export { resolveProtectionDefaults, type ProtectionSetupOptions } from './protection-setup.js';
export type { SecurityOptions } from './secure-engines.js';
