import type { CallTransport } from '../call/protected-call.interception.js';
import { callErrorPayloadOf } from '../call/call-error.js';
import { rpcKeyContext } from './rpc-key.context.js';

/**
 * oncely refusals as the `RpcException` Nest sends back to a requesting client:
 * `{ code: 'ONCELY_PAYLOAD_MISMATCH', message, status, … }`. `@nestjs/microservices` is loaded
 * only here, in an RPC context, where it is installed by definition.
 */
export async function toRpcError(error: unknown): Promise<unknown> {
  const payload = callErrorPayloadOf(error);
  if (!payload) return error;
  const { RpcException } = await import('@nestjs/microservices');
  return new RpcException({ ...payload });
}

/** Message handlers (`@MessagePattern`, `@EventPattern`) under oncely. */
export const rpcCallTransport: CallTransport = { keyContext: rpcKeyContext, toError: toRpcError };
