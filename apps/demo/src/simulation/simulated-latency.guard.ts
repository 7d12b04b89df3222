import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { DemoRequest } from '../identity/demo-principal.js';
import { DemoProblemType, ProblemException } from '../problems/problem.exception.js';

export const DEFAULT_SIMULATED_LATENCY_MS = 300;
export const MAX_SIMULATED_LATENCY_MS = 10_000;

/**
 * Reads `X-Simulate-Latency-Ms` (default 300, at most 10 000) into the request. It is transport:
 * no key reads it, so two requests differing only in it are the same request. It is checked in a
 * guard, before oncely runs, so a bad value is a 400 that never gets locked or stored.
 */
@Injectable()
export class SimulatedLatencyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<DemoRequest>();
    const raw = request.headers['x-simulate-latency-ms'];
    if (raw === undefined) {
      request.simulatedLatencyMs = DEFAULT_SIMULATED_LATENCY_MS;
      return true;
    }
    const value = typeof raw === 'string' && /^\d{1,5}$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!(value <= MAX_SIMULATED_LATENCY_MS)) {
      throw new ProblemException({
        type: DemoProblemType.invalidHeader,
        title: 'Invalid header',
        status: 400,
        detail: `X-Simulate-Latency-Ms must be an integer from 0 to ${MAX_SIMULATED_LATENCY_MS}.`,
        header: 'x-simulate-latency-ms',
      });
    }
    request.simulatedLatencyMs = value;
    return true;
  }
}
