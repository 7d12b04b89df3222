import { setTimeout as sleep } from 'node:timers/promises';
import type { DemoRequest } from '../identity/demo-principal.js';
import { DEFAULT_SIMULATED_LATENCY_MS } from './simulated-latency.guard.js';

/** Waits as long as the request's `X-Simulate-Latency-Ms` asks: the "expensive" part of a handler. */
export async function simulateWork(request: DemoRequest): Promise<void> {
  const ms = request.simulatedLatencyMs ?? DEFAULT_SIMULATED_LATENCY_MS;
  if (ms > 0) await sleep(ms);
}
