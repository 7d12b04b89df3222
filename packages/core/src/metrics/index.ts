export * from './prometheus-event.listener.js';
