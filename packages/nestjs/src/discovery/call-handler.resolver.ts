import { OncelyConfigurationError, type ProtectedRouteDeclaration } from '@oncely/core';
import type { ProtectedRoute } from '@oncely/core/adapter';
import { KEY_AFTER_INTERCEPTORS_METADATA } from '../oncely.constants.js';
import type { ProtectedRouteDefiner } from './protected-handler.options.js';
import {
  GRAPHQL_RESOLVER_METADATA,
  RPC_PATTERN_METADATA,
  type ProtectedHandlerKind,
} from './protected-handler.entry.js';

/** Where a decorated method outside HTTP routes is called from. */
export type CallHandlerKind = Exclude<ProtectedHandlerKind, 'http'>;

const KIND_LABELS: Readonly<Record<CallHandlerKind, string>> = {
  rpc: 'message handler',
  graphql: 'resolver',
  method: 'provider method',
};

/** A message handler, a resolver or any other provider method, by the metadata it carries. */
export function callHandlerKindOf(handler: object): CallHandlerKind {
  if (Reflect.getMetadata(RPC_PATTERN_METADATA, handler) !== undefined) return 'rpc';
  if (Reflect.getMetadata(GRAPHQL_RESOLVER_METADATA, handler) !== undefined) return 'graphql';
  return 'method';
}

/**
 * Resolves one decorated method outside HTTP routes at start-up. A provider method's input is
 * its arguments (`args.0.messageId`); a message's and a resolver's, the payload or arguments.
 */
export function resolveCallHandler(
  owner: string,
  method: string,
  kind: CallHandlerKind,
  declared: ProtectedRouteDeclaration,
  define: ProtectedRouteDefiner,
  handler: object,
): ProtectedRoute {
  const name = `${owner}.${method} (${KIND_LABELS[kind]})`;
  const { idempotent, singleFlight } = declared;
  if (Reflect.getMetadata(KEY_AFTER_INTERCEPTORS_METADATA, handler) === true) {
    throw new OncelyConfigurationError(
      `${name} sets keyAfterInterceptors, which only HTTP routes take: a ${KIND_LABELS[kind]}'s keys are built from its arguments as received. Remove the option.`,
    );
  }
  if (idempotent?.transactional) {
    throw new OncelyConfigurationError(
      `${name} asks for transactional: true, which only HTTP routes support for now. Write through your own transaction and keep the record outside it, or expose the operation as an HTTP route.`,
    );
  }
  if (kind === 'method' && idempotent && idempotent.idempotencyKey !== 'ignored') {
    throw new OncelyConfigurationError(
      `${name} has no request headers to read an Idempotency-Key from. Set idempotencyKey: 'ignored' and identify the call by its arguments (for example target: 'args.0.messageId').`,
    );
  }
  const input = kind === 'method' ? { input: ['args'] } : {};
  return define(name, {
    ...(idempotent && { idempotent: { ...input, ...idempotent } }),
    ...(singleFlight && { singleFlight: { ...input, ...singleFlight } }),
  });
}
