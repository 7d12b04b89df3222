import type { ExecutionContext } from '@nestjs/common';
import type { KeyContext } from '@oncely/core';
import { RPC_PATTERN_METADATA } from '../discovery/protected-handler.entry.js';

interface TransportContext {
  getSubject?(): unknown;
  getPattern?(): unknown;
  getTopic?(): unknown;
  getChannel?(): unknown;
  getHeaders?(): unknown;
  getMessage?(): unknown;
}

/**
 * The key context of a message handler: `body` (and `args.0`) is the payload, `headers` the
 * transport headers (NATS, RabbitMQ, Kafka; names in lower case) and `params.topic` the subject,
 * queue pattern or topic the message came on (the declared pattern if the transport has none).
 */
export function rpcKeyContext(context: ExecutionContext): KeyContext {
  const rpc = context.switchToRpc();
  const payload: unknown = rpc.getData();
  const transport = rpc.getContext<TransportContext | undefined>();
  return {
    body: payload,
    args: [payload],
    headers: transportHeadersOf(transport),
    params: { topic: topicOf(transport, context.getHandler()) },
  };
}

function topicOf(transport: TransportContext | undefined, handler: object): string {
  for (const read of ['getSubject', 'getPattern', 'getTopic', 'getChannel'] as const) {
    const value = typeof transport?.[read] === 'function' ? transport[read]() : undefined;
    if (typeof value === 'string' && value !== '') return value;
  }
  const declared: unknown = Reflect.getMetadata(RPC_PATTERN_METADATA, handler);
  const pattern: unknown = Array.isArray(declared) ? declared[0] : declared;
  return typeof pattern === 'string' ? pattern : JSON.stringify(pattern ?? '');
}

function transportHeadersOf(transport: TransportContext | undefined): Record<string, string> {
  const raw =
    typeof transport?.getHeaders === 'function'
      ? transport.getHeaders()
      : messageHeadersOf(typeof transport?.getMessage === 'function' && transport.getMessage());
  const headers: Record<string, string> = {};
  if (typeof raw !== 'object' || raw === null) return headers;
  const natsHeaders = raw as { keys?: () => Iterable<string>; get?: (name: string) => string };
  if (typeof natsHeaders.keys === 'function' && typeof natsHeaders.get === 'function') {
    for (const name of natsHeaders.keys()) headers[name.toLowerCase()] = natsHeaders.get(name);
    return headers;
  }
  for (const [name, value] of Object.entries(raw)) {
    const text = headerValueOf(value);
    if (text !== undefined) headers[name.toLowerCase()] = text;
  }
  return headers;
}

/** RabbitMQ keeps headers under `properties.headers`, Kafka on the message itself. */
function messageHeadersOf(message: unknown): unknown {
  if (typeof message !== 'object' || message === null) return undefined;
  const candidate = message as { properties?: { headers?: unknown }; headers?: unknown };
  return candidate.properties?.headers ?? candidate.headers;
}

function headerValueOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return headerValueOf(value[0]);
  return undefined;
}
