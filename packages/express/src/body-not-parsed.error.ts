import { OncelyError } from '@oncely/core';

/**
 * A protected route's key reads the request body, and no body parser ran before oncely's
 * middleware: every request would be keyed on the same missing body, so a reused key with
 * another payload would replay the first response. A developer error, found on the first request
 * to the route, refused before any lock or record exists.
 */
export class BodyNotParsedError extends OncelyError {
  readonly code = 'body_not_parsed';

  constructor(
    /** The route whose key reads the body. */
    readonly route: string,
  ) {
    super(
      `${route} builds its idempotency key or fingerprint from the request body, but no body parser ran before oncely's middleware. Register express.json() (or another body parser) before oncely's middleware, e.g. app.use(express.json()); a route whose key reads no body sets input: [] and no body.* path.`,
    );
  }
}
