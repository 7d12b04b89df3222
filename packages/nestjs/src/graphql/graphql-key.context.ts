import type { ExecutionContext } from '@nestjs/common';
import type { KeyContext } from '@oncely/core';

interface GraphQLContextValue {
  req?: { headers?: unknown; user?: unknown };
  request?: { headers?: unknown; user?: unknown };
  user?: unknown;
}

/**
 * The key context of a resolver: `body` is the field's arguments (`body.input.requestId`),
 * `headers` and `user` those of the HTTP request carrying the operation (Apollo's `req`,
 * Mercurius' `request`), `params.field` the field name.
 */
export function graphqlKeyContext(context: ExecutionContext): KeyContext {
  const [, args, contextValue, info] =
    context.getArgs<
      [unknown, unknown, GraphQLContextValue | undefined, { fieldName?: string } | undefined]
    >();
  const request = contextValue?.req ?? contextValue?.request;
  return {
    body: args,
    headers: request?.headers,
    user: request?.user ?? contextValue?.user,
    params: { field: info?.fieldName },
  };
}
