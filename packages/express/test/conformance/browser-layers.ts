import { CONFORMANCE_ORIGIN, CONFORMANCE_SESSION_COOKIE } from '@oncely/core/testing';
import cors, { type CorsOptions } from 'cors';
import session from 'express-session';
import helmet from 'helmet';
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

/** The CORS policy of the fixture's browser layers, as `cors` and `app.enableCors` take it. */
export const CONFORMANCE_CORS: CorsOptions = {
  // A list, as most apps allow several: the answer then depends on Origin (Vary) everywhere.
  origin: [CONFORMANCE_ORIGIN],
  exposedHeaders: ['Idempotent-Replayed', 'Retry-After'],
};

/** Signs the fixture's session cookies; a test secret, long enough for every session layer. */
export const CONFORMANCE_SESSION_SECRET = 'conformance-session-secret-at-least-32-chars';

/** `X-Request-Id`: the request's own, else a new one. */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && header !== '' ? header : randomUUID();
}

/**
 * The session middleware of the browser layers: a new session, and its cookie, for every request
 * without one; express-session sets the cookie when the response's headers are written.
 */
export function sessionLayer(): RequestHandler {
  return session({
    name: CONFORMANCE_SESSION_COOKIE,
    secret: CONFORMANCE_SESSION_SECRET,
    resave: false,
    saveUninitialized: true,
  });
}

/** Helmet, the session and the request id, in the order an Express app registers them. */
export function expressBrowserLayers(): RequestHandler[] {
  return [
    helmet(),
    sessionLayer(),
    (req, res, next) => {
      res.setHeader('x-request-id', requestId(req.headers['x-request-id']));
      next();
    },
  ];
}

/** The browser layers of a plain Express app: CORS first, then the rest. */
export function plainExpressBrowserLayers(): RequestHandler[] {
  return [cors(CONFORMANCE_CORS), ...expressBrowserLayers()];
}
