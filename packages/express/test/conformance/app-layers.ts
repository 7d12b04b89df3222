import { InvalidBodyError, KeyIgnore, type BodyViolation } from '@oncely/express';
import { isValidPayBody, type ConformanceProbe } from '@oncely/core/testing';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';

/** A user as an ORM would return it: the serializer must drop the hash and add the display name. */
export class UserView {
  constructor(
    readonly id: string,
    readonly name: string,
    readonly passwordHash: string,
  ) {}

  get displayName(): string {
    return `${this.name} (${this.id.slice(0, 4)})`;
  }
}

/** The app's response shaping: what `ClassSerializerInterceptor` is to Nest. */
export const serializer: RequestHandler = (_req, res, next) => {
  const json = res.json.bind(res);
  res.json = (body?: unknown) =>
    json(
      body instanceof UserView
        ? { id: body.id, name: body.name, displayName: body.displayName }
        : body,
    );
  next();
};

function parsed(header: string | undefined): unknown {
  if (header === undefined) return undefined;
  try {
    return JSON.parse(header);
  } catch {
    return undefined;
  }
}

export interface AuthedRequest extends Request {
  user?: unknown;
  principal?: unknown;
}

/** The fixture's auth layer: the principal from `x-principal` (JSON) or `x-tenant`. */
export function authentication(probe: ConformanceProbe): RequestHandler {
  return (req: AuthedRequest, _res, next) => {
    probe.arrive(req.path);
    const principal = req.get('x-principal');
    const tenant = req.get('x-tenant');
    if (principal !== undefined) req.user = parsed(principal);
    else if (tenant !== undefined) req.user = { tenantId: tenant };
    req.principal = parsed(req.get('x-alt-principal'));
    next();
  };
}

/** Answers 503 after 0.8 s when the route has not answered yet. */
export const timeoutLayer: RequestHandler = (_req, res, next) => {
  const timer = setTimeout(() => {
    if (!res.headersSent) res.status(503).json({ message: 'timed out' });
  }, 800);
  res.once('close', () => clearTimeout(timer));
  next();
};

/** An error a handler throws: its status and the fields the client gets. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.message));
  }
}

/** The app's catch-all error handler, registered last as Express wants. */
export const catchAll: ErrorRequestHandler = (error: unknown, _req, res: Response, next) => {
  if (res.headersSent) {
    next(error);
    return;
  }
  const { status, body: errorBody } = error as { status?: unknown; body?: unknown };
  const code = typeof status === 'number' && status >= 400 ? status : 500;
  // Errors carrying a body (the app's own HttpError, and oncely's SharedFlightError, which
  // hands SingleFlight followers the leader's thrown error) are rendered with it.
  const body =
    typeof errorBody === 'object' && errorBody !== null
      ? errorBody
      : { message: code < 500 ? (error as Error).message : 'Internal server error' };
  res.status(code).json(body);
};

/** Express runs `async` handlers' rejections into `next` only from version 5 on. */
export function handler(
  run: (req: AuthedRequest, res: Response, next: (error?: unknown) => void) => unknown,
): RequestHandler {
  return (req, res, next) => {
    Promise.resolve()
      .then(() => run(req, res, next))
      .catch(next);
  };
}

/** A validated order; the client's clock is no part of what makes two orders the same. */
export class OrderBody {
  customer!: string;
  lines!: { sku: string; quantity: number }[];
  @KeyIgnore()
  clientSentAt?: string;
}

/** The order validation of the contract, whitelisting: unknown fields are dropped. */
export function validateOrder(body: unknown) {
  const violations: BodyViolation[] = [];
  const value = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof value.customer !== 'string' || value.customer === '') {
    violations.push({ property: 'customer', messages: ['customer must be a non-empty string'] });
  }
  const lines = Array.isArray(value.lines) ? (value.lines as unknown[]) : [];
  if (!Array.isArray(value.lines)) {
    violations.push({ property: 'lines', messages: ['lines must be an array'] });
  }
  const kept = lines.map((line, i) => {
    const fields = (typeof line === 'object' && line !== null ? line : {}) as Record<
      string,
      unknown
    >;
    if (typeof fields.sku !== 'string' || fields.sku === '') {
      violations.push({ property: `lines.${i}.sku`, messages: ['sku must be a non-empty string'] });
    }
    if (!Number.isInteger(fields.quantity) || (fields.quantity as number) < 1) {
      violations.push({
        property: `lines.${i}.quantity`,
        messages: ['quantity must be an integer >= 1'],
      });
    }
    return { sku: fields.sku as string, quantity: fields.quantity as number };
  });
  if (typeof value.clientSentAt !== 'string' && value.clientSentAt !== undefined) {
    violations.push({ property: 'clientSentAt', messages: ['clientSentAt must be a string'] });
  }
  if (violations.length > 0) throw new InvalidBodyError(violations);
  return Object.assign(new OrderBody(), {
    customer: value.customer as string,
    lines: kept,
    ...(value.clientSentAt !== undefined && { clientSentAt: value.clientSentAt as string }),
  });
}

export function validateUser(body: unknown) {
  const name = (body as { name?: unknown } | undefined)?.name;
  if (typeof name !== 'string') {
    throw new InvalidBodyError([{ property: 'name', messages: ['name must be a string'] }]);
  }
  return { name };
}

export function validatePay(body: unknown) {
  if (!isValidPayBody(body)) {
    throw new InvalidBodyError([{ property: 'body', messages: ['orderId and amount'] }]);
  }
  return { orderId: body.orderId, amount: body.amount };
}
