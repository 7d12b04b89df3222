import type { Type } from '@nestjs/common';
import { InvalidBodyError, type BodyViolation } from '@oncely/core';
import { MAX_INPUT_DEPTH } from '@oncely/core/adapter';
import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import type { OncelyValidationOptions } from '../oncely-module-options.interface.js';

/**
 * Validates and transforms a request body into its DTO class as the app's `ValidationPipe`
 * would, before any key, lock or record exists (Nest runs interceptors before pipes).
 */
export async function validateBody(
  type: Type,
  body: unknown,
  options: OncelyValidationOptions,
): Promise<object> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidBodyError([
      { property: '(body)', messages: ['the body must be a JSON object'] },
    ]);
  }
  // class-transformer recurses once per level: a deeply nested body would overflow the stack
  // (a 500) before any validation runs. Keys refuse such input anyway (same limit).
  if (exceedsDepth(body, MAX_INPUT_DEPTH)) {
    throw new InvalidBodyError([
      {
        property: '(body)',
        messages: [`the body is nested deeper than ${MAX_INPUT_DEPTH} levels`],
      },
    ]);
  }
  const instance = plainToInstance(type, body, options.transformer) as object;
  const errors = await validate(instance, options.validator);
  if (errors.length > 0) throw new InvalidBodyError(violationsOf(errors, ''));
  return instance;
}

function violationsOf(errors: readonly ValidationError[], prefix: string): BodyViolation[] {
  return errors.flatMap((error) => {
    const property = `${prefix}${error.property}`;
    const own: BodyViolation[] = error.constraints
      ? [{ property, messages: Object.values(error.constraints) }]
      : [];
    return [...own, ...violationsOf(error.children ?? [], `${property}.`)];
  });
}

/** Whether `value` nests objects or arrays more than `limit` levels deep (iterative: no recursion). */
function exceedsDepth(value: object, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}
