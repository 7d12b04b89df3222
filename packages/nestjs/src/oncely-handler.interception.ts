import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { resolveCallKeys, type ProtectedCallExecutor } from '@oncely/core';
import { lastValueFrom, of, type Observable } from 'rxjs';
import { callResponseOf, callValueOf } from './oncely-call.values.js';
import type { OncelyHandlerEntry } from './oncely-handler.explorer.js';
import { graphqlKeyContext, toGraphQLError } from './oncely-graphql.context.js';
import { rpcKeyContext, toRpcError } from './oncely-rpc.context.js';

/**
 * One message handler or resolver call under oncely: keys from the payload, headers or
 * arguments; the handler runs once per key (a duplicate message is acknowledged with the kept
 * result, without running it again); refusals become an `RpcException` or a GraphQL error with a
 * stable code. A thrown handler error releases the record, so a redelivery runs again.
 */
export async function interceptProtectedHandler(
  executor: ProtectedCallExecutor,
  entry: OncelyHandlerEntry,
  context: ExecutionContext,
  next: CallHandler,
): Promise<Observable<unknown>> {
  const rpc = entry.kind === 'rpc';
  try {
    const keys = resolveCallKeys(
      entry.route,
      rpc ? rpcKeyContext(context) : graphqlKeyContext(context),
    );
    const result = await executor.execute({
      route: entry.route,
      keys,
      handler: async () => {
        const value: unknown = await lastValueFrom(next.handle(), { defaultValue: undefined });
        return callResponseOf(value, entry.route.name);
      },
    });
    return of(callValueOf(result));
  } catch (error) {
    throw rpc ? await toRpcError(error) : toGraphQLError(error);
  }
}
