import type { ProtectedCallExecutor, ProtectedRoute } from '@oncely/core/adapter';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Replaces `instance[method]` (as an own property: the class and other instances are untouched)
 * by one that builds the keys from the arguments (`args.0.messageId`), lets the executor decide
 * (run, share, replay, refuse) and returns the value, or the kept one for a replay. The result is
 * always a promise. Metadata of the original function is copied, so decorators whose explorers
 * read it later (schedulers, event listeners) still find theirs; oncely's own errors are thrown
 * as they are.
 */
export function wrapProtectedMethod(
  instance: Record<string, unknown>,
  method: string,
  original: Method,
  route: ProtectedRoute,
  executor: ProtectedCallExecutor,
): void {
  const protectedMethod = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
    const { value } = await executor.executeValue({
      route,
      keyContext: { args },
      run: async () => original.apply(this, args),
    });
    return value;
  };
  for (const key of Reflect.getMetadataKeys(original) as unknown[]) {
    Reflect.defineMetadata(key, Reflect.getMetadata(key, original), protectedMethod);
  }
  Object.defineProperty(protectedMethod, 'name', { value: original.name });
  instance[method] = protectedMethod;
}
