import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ONCELY_TRANSACTION } from '../oncely.constants.js';
import { OncelyConfigurationError } from '@oncely/core';

/** Reads the transaction the interceptor opened for this request. */
export function readIdempotencyTransaction(_data: unknown, context: ExecutionContext): unknown {
  const request = context.switchToHttp().getRequest<Record<symbol, unknown>>();
  const transaction = request[ONCELY_TRANSACTION];
  if (transaction === undefined) {
    throw new OncelyConfigurationError(
      '@IdempotencyManager() found no transaction: the route needs @IdempotentKey({ transactional: true }) and a TypeORM store.',
    );
  }
  return transaction;
}

/**
 * The `EntityManager` of the transaction in which a `transactional` idempotent route runs: write
 * through it, and the writes commit together with the idempotency record (or not at all).
 */
export const IdempotencyManager = createParamDecorator(readIdempotencyTransaction);
