import type { ServerResponse } from 'node:http';
import type { HttpResponse } from './http-response.js';
import { expressFreshness, writeHttpResponse } from './response-writer.js';

type ExpressSend = (this: ServerResponse, ...args: unknown[]) => unknown;

/** What oncely uses of an Express response, read without importing Express. */
interface ExpressResponseLike extends ServerResponse {
  send: ExpressSend;
  json: ExpressSend;
  app?: { parent?: unknown };
}

/** The answer each response is to send at its next `send`/`json`. */
const answers = new WeakMap<object, HttpResponse>();
/** Our prototype in front of each Express app's response prototype, made once. */
const answeringPrototypes = new WeakMap<object, object>();

/**
 * Answers a replay or a shared result on Express at the `res.json`/`res.send` the framework
 * makes for the value handed on (Nest's Express platform), instead of holding the response: that call writes the kept
 * answer (`writeHttpResponse`, with Express's own 304 check) and nothing of the value, so neither
 * its serialisation nor its ETag is computed. Headers the app's layers set for this request
 * stay, and session middleware still sets its cookie when the headers are written. The response
 * gets, until then, one prototype of ours in front of its app's (as Express swaps prototypes
 * itself; an own property would be V8's slow path). Returns `false` where that is not safe, and
 * the capture answers: not an Express response, or one of a mounted sub-app (whose exit swaps
 * the prototype back).
 */
export function answerThroughExpressResponse(res: unknown, response: HttpResponse): boolean {
  if (!isExpressResponse(res) || res.headersSent || res.app?.parent !== undefined) return false;
  const prototype = Object.getPrototypeOf(res) as object;
  if (prototype === res.constructor.prototype || answers.has(res)) return false;
  answers.set(res, response);
  Object.setPrototypeOf(res, answeringPrototypeOf(prototype as ExpressResponseLike));
  return true;
}

function isExpressResponse(res: unknown): res is ExpressResponseLike {
  const candidate = res as Partial<ExpressResponseLike> | null;
  return (
    typeof candidate?.send === 'function' &&
    typeof candidate.json === 'function' &&
    typeof candidate.setHeader === 'function' &&
    typeof candidate.req === 'object'
  );
}

function answeringPrototypeOf(prototype: ExpressResponseLike): object {
  let answering = answeringPrototypes.get(prototype);
  if (answering) return answering;
  answering = Object.create(prototype) as object;
  for (const name of ['send', 'json'] as const) {
    const own = prototype[name];
    const answer = function (this: ServerResponse, ...args: unknown[]): unknown {
      const kept = answers.get(this);
      if (kept === undefined) return own.apply(this, args);
      answers.delete(this);
      Object.setPrototypeOf(this, prototype);
      writeHttpResponse(this, kept, expressFreshness);
      return this;
    };
    Object.defineProperty(answering, name, { value: answer, writable: true, configurable: true });
  }
  answeringPrototypes.set(prototype, answering);
  return answering;
}
