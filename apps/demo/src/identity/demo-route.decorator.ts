import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { SimulatedLatencyGuard } from '../simulation/simulated-latency.guard.js';
import { TenantGuard } from './tenant.guard.js';

/**
 * A business route of the demo: tenant guard, simulated latency, and the headers documented.
 * `idempotencyKey` says how the route treats `Idempotency-Key` (for the OpenAPI document).
 */
export function DemoRoute(idempotencyKey: 'required' | 'optional' | 'none'): MethodDecorator {
  return applyDecorators(
    UseGuards(TenantGuard, SimulatedLatencyGuard),
    ApiHeader({
      name: 'X-Tenant-Id',
      required: true,
      description:
        'Tenant of the caller (stands in for authentication); every key is scoped by it.',
    }),
    ApiHeader({ name: 'X-User-Id', required: false, description: 'User of the caller.' }),
    ApiHeader({
      name: 'X-Simulate-Latency-Ms',
      required: false,
      description:
        'How long the handler works (0–10000, default 300). Transport: never part of a key.',
      schema: { type: 'integer', minimum: 0, maximum: 10_000, default: 300 },
    }),
    ...(idempotencyKey === 'none'
      ? []
      : [
          ApiHeader({
            name: 'Idempotency-Key',
            required: idempotencyKey === 'required',
            description:
              'One value per logical operation, reused on every retry of it (1–255 printable ASCII; token or quoted string). Combined with the tenant, so keys never cross tenants.',
          }),
        ]),
  );
}
