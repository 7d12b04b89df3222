import type { HttpResponse } from './http-response.js';
import { answerThroughExpressResponse } from './answer-through-express-response.js';
import { answerThroughFastifyReply } from './answer-through-fastify-reply.js';

/**
 * Has the platform's next send on `reply` (Fastify's `reply.send`, Express's `res.json` or
 * `res.send`) write `response` in place of what the app's layers made of the value they were
 * handed, so a replay or a shared result goes out through the app's own pipeline without the
 * Node response being held. Returns `false` where the platform would change what is sent; the
 * caller then answers through a `ResponseCapture` (`replaceWith`).
 */
export function answerAtNextSend(reply: unknown, response: HttpResponse): boolean {
  return (
    answerThroughFastifyReply(reply, response) || answerThroughExpressResponse(reply, response)
  );
}
