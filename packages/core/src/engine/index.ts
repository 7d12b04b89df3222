export * from './oncely-engine.js';
export * from './oncely-engine.options.js';
export * from './option-checks.js';
export * from './protection-engines.js';
export * from './protection-setup.js';
export * from './secure-engines.js';
