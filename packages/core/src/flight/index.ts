export * from './clock.js';
export * from './flight-coordinator.port.js';
export * from './flight.types.js';
