import { IdempotencyConflictError } from '@oncely/core';
import type { ProtectedCallExecutor, ProtectedRoute } from '@oncely/core/adapter';
import type { StandbyRegistry } from './standby.registry.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Replaces `instance[method]` (as an own property: the class and other instances are untouched)
 * by one that builds the keys from the arguments (`args.0.messageId`), lets the executor decide
 * (run, share, replay, refuse) and returns the value, or the kept one for a replay. The result is
 * always a promise. Metadata of the original function is copied, so decorators whose explorers
 * read it later (schedulers, event listeners) still find theirs; oncely's own errors are thrown
 * as they are.
 *
 * A call refused as in flight elsewhere (`IdempotencyConflictError`) also leaves a standby for
 * its identity (`StandbyRegistry`): a provider method has no client that would retry, so this
 * process calls it again once that run's lease would end, and runs it if the run never completed.
 */
export function wrapProtectedMethod(
  instance: Record<string, unknown>,
  method: string,
  original: Method,
  route: ProtectedRoute,
  executor: ProtectedCallExecutor,
  standbys: StandbyRegistry,
): void {
  const call = (self: unknown, args: unknown[], onRun?: () => void) =>
    executor.executeValue({
      route,
      keyContext: { args },
      run: async () => {
        onRun?.();
        return original.apply(self, args);
      },
    });
  const protectedMethod = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
    try {
      const { value } = await call(this, args);
      return value;
    } catch (error) {
      if (error instanceof IdempotencyConflictError) {
        standbys.keep(error, route, (onRun) => call(this, args, onRun));
      }
      throw error;
    }
  };
  for (const key of Reflect.getMetadataKeys(original) as unknown[]) {
    Reflect.defineMetadata(key, Reflect.getMetadata(key, original), protectedMethod);
  }
  Object.defineProperty(protectedMethod, 'name', { value: original.name });
  instance[method] = protectedMethod;
}
