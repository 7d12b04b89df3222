import { OncelyError } from '../errors/oncely-error.js';

/**
 * Why a body a route's key reads was not there when the key was built:
 * - `no-body-parser`: nothing set `req.body` (Express without `express.json()`, a Nest app
 *   created with `bodyParser: false`);
 * - `multipart-not-parsed`: a `multipart/form-data` request whose stream nothing has read yet
 *   (multer mounted after oncely, or a custom upload interceptor oncely was not told of);
 * - `upload-not-readable`: an uploaded file holds neither its bytes nor a path to them (a custom
 *   multer storage engine), so it cannot be hashed into the fingerprint.
 */
export type BodyNotParsedReason = 'no-body-parser' | 'multipart-not-parsed' | 'upload-not-readable';

const FIXES: Readonly<Record<BodyNotParsedReason, string>> = {
  'no-body-parser':
    "no body parser ran before oncely. In Express, register express.json() (or another body parser) before oncely's middleware, e.g. app.use(express.json()); in Nest, keep the app's bodyParser on or register a parser yourself; a route whose key reads no body sets input: [] and no body.* path.",
  'multipart-not-parsed':
    "the multipart body was not parsed yet when oncely built the key. In Express, mount multer (upload.single('file'), …) before oncely's middleware; in Nest, multer's FileInterceptor family is recognised, and a custom upload interceptor is declared with the route option keyAfterInterceptors: true.",
  'upload-not-readable':
    'an uploaded file has neither a buffer nor a path, so its bytes cannot be hashed into the fingerprint. Use multer.memoryStorage() or diskStorage, or leave files out of the key with an input that names no files.* path.',
};

/**
 * A protected route's key reads the request body (or its uploaded files), and they were not there
 * when oncely built the key: every request would be keyed on the same missing body, so a reused
 * key with another payload would replay the first response. A developer error, found on the
 * first such request, refused before any lock or record exists.
 */
export class BodyNotParsedError extends OncelyError {
  readonly code = 'body_not_parsed';

  constructor(
    /** The route whose key reads the body. */
    readonly route: string,
    /** What was missing; the message says how to fix it. */
    readonly reason: BodyNotParsedReason,
  ) {
    super(
      `${route} builds its idempotency key or fingerprint from the request body, but ${FIXES[reason]}`,
    );
  }
}
