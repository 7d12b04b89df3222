import { BodyNotParsedError } from '../http/body-not-parsed.error.js';
import {
  isUnparsedMultipart,
  uploadedFileDigests,
  type UploadCarrier,
} from '../http/uploaded-files.js';
import type { KeyContext } from '../key/key.types.js';
import { resolveCallKeys, type CallKeys } from './call-keys.js';
import type { ProtectedRoute } from './protected-route.js';
import { routeReadsBody } from './route-reads-body.js';

/** What the check for an unparsed body reads of the Node request. */
interface NodeRequestState {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly readableEnded: boolean;
}

/** What keys read of an HTTP request: Express's `req` (a Node request), or Fastify's request. */
export interface HttpKeyRequest extends UploadCarrier {
  body?: unknown;
  readonly params?: unknown;
  readonly query?: unknown;
  readonly headers: NodeRequestState['headers'];
  readonly user?: unknown;
  /** Fastify's request wraps the Node one. */
  readonly raw?: NodeRequestState;
}

/** What a framework adds to the keys of one request, all optional. */
export interface HttpKeyHooks {
  /**
   * The route's own layers parse the body before keys are built (a multer interceptor), so the
   * check for a body nothing parsed is not made.
   */
  readonly bodyParsed?: boolean;
  /** The body the handler receives (a validated DTO); it replaces `request.body`. */
  readonly validate?: (body: unknown) => unknown;
  /** The principal, where it is not `request.user`. */
  readonly user?: () => unknown;
  /** Where keys read the request context from (a Nest module's `keyContext` option). */
  readonly keyContext?: (base: KeyContext) => KeyContext | Promise<KeyContext>;
}

const readsBody = new WeakMap<ProtectedRoute, boolean>();

/**
 * The keys of one HTTP request, in order: refuse a request whose keys read a body nothing parsed
 * (`BodyNotParsedError`: no body parser ran, or a multipart body is still on the wire), validate
 * the body, then key the request context, each uploaded file by the SHA-256 of its bytes. Throws
 * before any lock is taken, with the errors `toProblemResponse` maps to 400.
 */
export async function httpCallKeys(
  route: ProtectedRoute,
  request: HttpKeyRequest,
  hooks: HttpKeyHooks = {},
): Promise<CallKeys> {
  if (!hooks.bodyParsed && readsBodyOf(route)) refuseUnparsedBody(route, request);
  if (hooks.validate) request.body = await hooks.validate(request.body);
  const files = uploadedFileDigests(request, route.name);
  const base: KeyContext = {
    body: request.body,
    params: request.params,
    query: request.query,
    headers: request.headers,
    user: hooks.user ? await hooks.user() : request.user,
    files: files && (await files),
  };
  return resolveCallKeys(route, hooks.keyContext ? await hooks.keyContext(base) : base);
}

function readsBodyOf(route: ProtectedRoute): boolean {
  let reads = readsBody.get(route);
  if (reads === undefined) readsBody.set(route, (reads = routeReadsBody(route)));
  return reads;
}

/**
 * Every body parser sets `body` (Express 5's to `undefined` for a request without one; Fastify
 * always); without one the property does not exist. A multipart body is read by multer, which
 * must run first: a JSON parser leaves such a request unread.
 */
function refuseUnparsedBody(route: ProtectedRoute, request: HttpKeyRequest): void {
  if (!('body' in request)) throw new BodyNotParsedError(route.name, 'no-body-parser');
  if (isUnparsedMultipart(request.raw ?? (request as HttpKeyRequest & NodeRequestState)))
    throw new BodyNotParsedError(route.name, 'multipart-not-parsed');
}
