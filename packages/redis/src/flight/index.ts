export * from './invalid-redis-option.error.js';
export * from './redis-flight-coordinator.options.js';
export * from './redis-flight.coordinator.js';
