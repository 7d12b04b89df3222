import type { ServerResponse } from 'node:http';
import type { HttpResponse } from './http-response.js';
import { answerBytes } from './answer-body.js';
import { setAnswerHeaders, type AnswerHeaderTarget } from './response-writer.js';

/** What oncely uses of a Fastify reply (Fastify 4 and 5), read without importing Fastify. */
interface FastifyReplyLike {
  readonly raw: ServerResponse;
  readonly sent: boolean;
  code(status: number): unknown;
  header(name: string, value: string): unknown;
  getHeader(name: string): number | string | string[] | undefined;
  getHeaders(): Record<string, unknown>;
  removeHeader(name: string): unknown;
  send(payload?: unknown): unknown;
}

/**
 * Answers a replay or a shared result on Fastify through the reply the framework is about to
 * send, instead of holding the Node response under it: the next `reply.send` (with whatever
 * the app's outer layers made of the value handed on) sends the kept status, headers and
 * bytes in its place. The reply still runs its `onSend` hooks and writes once, with every header
 * its hooks produced for this request (CORS, helmet, session cookies), by the rule of
 * `setAnswerHeaders`. The bytes go as a `Buffer`, which Fastify sends untouched (no serializer,
 * no charset added). Returns `false`, leaving the call to `ResponseCapture`, where Fastify would
 * change what is sent: a body without a kept `Content-Type` (it would add one) or a status it
 * refuses.
 */
export function answerThroughFastifyReply(reply: unknown, response: HttpResponse): boolean {
  if (!isFastifyReply(reply) || reply.sent) return false;
  if (response.status < 200 || response.status > 599) return false;
  const bytes = answerBytes(response.body);
  if (bytes !== undefined && response.headers['content-type'] === undefined) return false;
  const target = headerTarget(reply);
  reply.send = function sendAnswer(this: FastifyReplyLike): unknown {
    // The own property goes as it came: the prototype's `send` is Fastify's again.
    delete (this as Partial<FastifyReplyLike>).send;
    this.code(response.status);
    setAnswerHeaders(target, response);
    return this.send(bytes);
  };
  return true;
}

function isFastifyReply(reply: unknown): reply is FastifyReplyLike {
  const candidate = reply as Partial<FastifyReplyLike> | null;
  return (
    typeof candidate?.raw === 'object' &&
    typeof candidate.send === 'function' &&
    typeof candidate.code === 'function' &&
    typeof candidate.getHeaders === 'function'
  );
}

/**
 * The reply's headers and the Node response's as one: Fastify writes its own over the raw ones
 * at `writeHead`, so a header is dropped from both (Fastify 4 drops it from its own only).
 */
function headerTarget(reply: FastifyReplyLike): AnswerHeaderTarget {
  return {
    getHeaderNames: () => Object.keys(reply.getHeaders()),
    getHeader: (name) => reply.getHeader(name),
    setHeader: (name, value) => reply.header(name, value),
    removeHeader: (name) => {
      reply.removeHeader(name);
      if (!reply.raw.headersSent) reply.raw.removeHeader(name);
    },
  };
}
