import type { ConformanceProbe } from './conformance-probe.js';

/**
 * The password hash the fixture's user view carries and its serializer must drop: it must never
 * reach a client, a record or a result cache.
 */
export const CONFORMANCE_SECRET = 'argon2id$conformance-secret-never-stored';

/** The browser origin the fixture's CORS layer allows (see `ConformanceAppSettings.browserLayers`). */
export const CONFORMANCE_ORIGIN = 'https://shop.example';

/** The name of the cookie the fixture's session layer sets. */
export const CONFORMANCE_SESSION_COOKIE = 'sid';

/**
 * What a harness's framework can express. Cases that need a capability the harness does not
 * declare are left out and named in `HttpConformanceSuite.leftOut`, never silently skipped.
 */
export type HttpConformanceCapability =
  /** Handlers may write the platform response themselves: `res.write`, `res.end`, `pipe`. */
  | 'raw-response-writes'
  /** Handlers may pass an error on with `next(error)`. */
  | 'next-error'
  /** `ConformanceApp.records()` and `storedText()` see what oncely kept. */
  | 'storage-inspection'
  /**
   * A handler can answer raw bytes, in a form oncely keeps, under the app's serializer. Nest on
   * Express cannot: its global `ClassSerializerInterceptor` turns a returned `Buffer` into JSON,
   * and a `StreamableFile` is refused by oncely at start-up.
   */
  | 'binary-body'
  /**
   * oncely runs with encryption at rest (its `encryption` option) and `ConformanceApp.storedText()`
   * returns the raw stored rows and keys, as the storage holds them (bytes decoded as Latin-1).
   */
  | 'encrypted-storage'
  /**
   * oncely can tell the handler's own answer from one an outer layer (the app's timeout) wrote
   * while the handler still ran, and so holds the key until the handler is done. Nest can (its
   * interceptor sees the handler settle); plain Express cannot, as both write the same `res`.
   */
  | 'outer-answer-detection'
  /**
   * The app parses `multipart/form-data` uploads with multer (Nest's `FileInterceptor` on the
   * Express platform; plain Express), which the upload routes of the fixture contract use.
   */
  | 'multipart-uploads';

/**
 * Marks on cases, for runners that take only some of the suite (see `HttpConformanceSelection`).
 */
export type HttpConformanceTag =
  /**
   * The case's outcome rests on what is written to storage and read back from it: replays,
   * refusals against a held or kept record, hostile inputs that must write exactly their own
   * records. A runner that only changes how data is stored (encryption at rest) runs these.
   */
  'stored-data';

/**
 * Which cases a runner takes: every case by default; with `tags`, only the cases carrying one of
 * them. Cases outside the selection are neither run nor listed in `leftOut`: the runner chose
 * them away, and runs them on another backend.
 */
export interface HttpConformanceSelection {
  /** Take only the cases carrying one of these tags. */
  readonly tags?: readonly HttpConformanceTag[];
}

/** What the suite asks of each app it starts; a fresh app is started for every case. */
export interface ConformanceAppSettings {
  /** Counts executions, holds handlers at gates and sees arrivals; see the fixture contract. */
  readonly probe: ConformanceProbe;
  /** oncely's namespace for this app, unique per case. */
  readonly namespace: string;
  /** How the catch-all error handler is registered: one of `catchAllRegistrations`. */
  readonly catchAll: string;
  /** How the serializer is registered: one of `serializerRegistrations`. */
  readonly serializer: string;
  /** Install the app-wide timeout layer (0.8 s); off unless a case needs it. */
  readonly timeoutLayer: boolean;
  /**
   * Install the app-wide layers of a browser-facing app (see the fixture contract); off unless a
   * case needs them.
   */
  readonly browserLayers?: boolean;
  /** A per-tenant record quota (in-memory quota), when the case tests it. */
  readonly recordQuota?: {
    /** Most new records per tenant and window. */
    readonly limit: number;
    /** Window length in milliseconds. */
    readonly windowMs: number;
  };
  /**
   * Add the two collision routes `POST /collisions/a` and `POST /collisions/b`, both claiming
   * operation `collision` with identical options (scope `user.tenantId`), marked `shared: true`
   * on both when `'shared'`; each answers 201 `{ route: 'a' | 'b', execution: hit('collision') }`.
   */
  readonly collidingRoutes?: 'unmarked' | 'shared';
}

/** A started fixture app. */
export interface ConformanceApp {
  /** `http://host:port`, no trailing slash. */
  readonly baseUrl: string;
  /** Stops the app and frees what it opened (drop open connections: cases may leave some). */
  close(): Promise<void>;
  /** With `storage-inspection`: how many responses oncely has kept (completed records). */
  records?(): Promise<number>;
  /** With `storage-inspection`: the text of everything oncely stored, records and results. */
  storedText?(): Promise<string>;
}

/**
 * One integration (framework + platform) under test. `start` builds an app following the
 * fixture contract below; it may reject (a boot error), which some cases expect.
 *
 * ## Fixture contract
 *
 * App-wide layers, registered the framework's usual way:
 * - **auth** (before oncely): calls `probe.arrive(path)`; sets `request.user` to the JSON of
 *   header `x-principal` (sent ASCII-escaped), else to `{ tenantId: <x-tenant> }` when that header
 *   is present; sets `request.principal` to the JSON of `x-alt-principal`. oncely reads the
 *   principal from `request.user`, or `request.principal` when there is no user, through its
 *   documented extension point (Nest: `keyContext`; Express: `resolveUser`).
 * - **serializer** (registered as `settings.serializer` says): a user view returned by a handler
 *   is sent as `{ id, name, displayName }` (`displayName` = `` `${name} (${id.slice(0, 4)})` ``),
 *   never with its `passwordHash` (Nest: global `ClassSerializerInterceptor` as
 *   `APP_INTERCEPTOR`; Express: response shaping).
 * - **validation**: bodies are whitelisted (unknown fields stripped, Nest: global
 *   `ValidationPipe({ whitelist: true })`, no oncely `validation` option). An order is
 *   `{ customer: non-empty string, lines: [{ sku: non-empty string, quantity: integer >= 1 }],
 *   clientSentAt?: string }` where `clientSentAt` is `@KeyIgnore()`d (out of the fingerprint);
 *   a pay body is `{ orderId: /^[A-Za-z0-9-]{1,64}$/, amount: /^\d{1,9}\.\d{2}$/ }`. JSON bodies
 *   over 100 KiB are refused with 413.
 * - **catch-all error handler** (registered as `settings.catchAll` says): answers an error with its
 *   status and a JSON body carrying the error's fields (`message`, `execution`); for oncely's
 *   problems it keeps the problem body as `application/problem+json`.
 * - **timeout layer** when `settings.timeoutLayer`: answers `timeoutStatus` after 0.8 s.
 * - **browser layers** when `settings.browserLayers`, in front of every route, each the way the
 *   platform's docs show (Nest: `app.enableCors`, `app.use(helmet())` or `@fastify/helmet`,
 *   `express-session` or `@fastify/session`): CORS for `CONFORMANCE_ORIGIN` exposing
 *   `Idempotent-Replayed` and `Retry-After`; helmet's default security headers; a session
 *   cookie named `CONFORMANCE_SESSION_COOKIE`, new for every request without one, set when the
 *   response is written; `X-Request-Id` set to the request's own, else to a new UUID.
 *
 * Routes (idempotent ones: scope `user.tenantId`, key header `idempotency-key` required; `hit(n)`
 * is `probe.hit(n)`, `pass(g)` is `await probe.pass(g)`; thrown errors go to the catch-all):
 * - `POST /orders` op `order-create`: validated order; `hit('order-create')`; 201,
 *   `Location: /orders/latest`, `{ id: uuid, execution, customer, lines: lines.length }`.
 * - `POST /orders/slow` op `order-slow`: `hit('order-slow')`, `pass('slow:' + customer)`; 201
 *   `{ id, execution }`. `POST /orders/slow-wait` the same with op `order-slow-wait`,
 *   `onBusy: 'wait'`, `wait: 30000`, gate `'slow-wait:' + customer`.
 * - `POST /orders/payments` op `payment`, `idempotencyKey: 'ignored'`, `target: 'body.customer'`,
 *   `missingUserStatus: 401`: validated order; 200 `{ paid: hit('payment'), customer }`.
 * - `POST /statuses/:code` op `status`, `target: 'params.code'`: `hit('status:' + code)`; sets the
 *   status through the platform (`res.status(code)`, Fastify `reply.code(code)`); `{ execution }`.
 * - `POST /flaky` op `flaky`: `hit('flaky')`; the first execution throws a 500; then 201
 *   `{ execution }`. `POST /rejected` op `rejected`: throws a 400 carrying
 *   `{ message: 'out of stock', execution: hit('rejected') }`.
 * - `POST /big` op `big`, `maxResponseBytes: 64`: `hit('big')`; 201 `{ padding: 'x' × 200 }`.
 * - `POST /refunds/v1` (201) and `POST /refunds/v2` (200), both op `refund`, `shared: true`:
 *   `{ refund: hit('refund'), version: 1 | 2 }`.
 * - `POST /bytes` op `bytes`: `hit('bytes')`; `application/octet-stream`, 4096 random bytes.
 * - `POST /headers` op `headers`, `replayHeaders: ['x-order-version']`: sets `ETag: "v1"`,
 *   `Set-Cookie: session=<random>`, `X-Order-Version: 7`, `X-Debug: per-response`,
 *   `Vary: Accept-Language` (added to any `Vary` a layer set);
 *   `{ execution: hit('headers') }`.
 * - `POST /users` op `user-create`: body `{ name }`; `hit('user-create')`; returns a user view
 *   `{ id: uuid, name, passwordHash: CONFORMANCE_SECRET }`; 201.
 * - `POST /slow-users` op `slow-user`: `hit('slow-user')`, `pass('slow-user:' + name)`, then as
 *   `/users`.
 * - `POST /hung` op `hung`, `maxDuration: 1000`, `onBusy: 'wait'`, `wait: 10000`:
 *   `n = hit('hung')`, `pass('hung:' + n)`; 201 `{ execution: n }`.
 * - `POST /held-wait` op `held-wait`, `onBusy: 'wait'`, `wait: 1000`: `n = hit('held-wait')`,
 *   `pass('held-wait:' + n)`; 201 `{ execution: n }`.
 * - `POST /transient` op `transient`, `onBusy: 'wait'`, `wait: 10000`: `n = hit('transient')`;
 *   when `n === 1`: `pass('transient:1')`, then throws a 503; else 201 `{ id: uuid, execution: n }`.
 * - `POST /outages/:failures` op `outage-wait`, `onBusy: 'wait'`, `wait: 10000`:
 *   `n = hit('outage-wait')`, `pass('outage-wait')`; when `n <= failures` throws a 503 carrying
 *   `{ message: 'upstream unavailable', execution: n }`; else 201 `{ execution: n }`.
 * - `POST /pay` op `pay`, `target: 'body.orderId'`, `missingUserStatus: 401`: validated pay body;
 *   201 `{ tenant: user.tenantId, orderId, amount, executions: hit('pay') }`.
 *   `POST /echo` op `echo`, `missingUserStatus: 401`, no validation (the whole body keys):
 *   201 `{ tenant: user.tenantId, executions: hit('echo') }`.
 * - SingleFlight (no client key, not scoped): `GET /users/:id` op `user-read`,
 *   `target: 'params.id'`, `input: []`, `resultTtl: 60000`: `hit('user-read:' + id)`; the user view
 *   `{ id, name: 'Ada', passwordHash: CONFORMANCE_SECRET }`. `GET /reports/:id` op `report`,
 *   `resultTtl: 60000`: `hit('report:' + id)`, `pass('report:' + id)`;
 *   `{ id, execution, renderedBy: uuid }`. `GET /reports/:id/strict` op `report-strict`,
 *   `onBusy: 'reject'`, `resultTtl: 0`: `hit('strict:' + id)`, `pass('strict:' + id)`;
 *   `{ id, execution }`. `GET /reports/:id/invalid` op `report-invalid`, `errorTtl: 60000`:
 *   throws a 400 carrying `{ message: 'unknown report', execution: hit('invalid:' + id) }`.
 *   `GET /outages/:failures/:id` op `outage`, `target: 'params.id'`, `input: []`,
 *   `resultTtl: 60000`: `n = hit('outage:' + id)`, `pass('outage:' + id)`; when `n <= failures`
 *   throws a 503 carrying `{ message: 'upstream unavailable', execution: n }`; else `{ id, execution: n }`.
 *   `GET /lookups/:status/:id` op `lookup-status`, `target: 'params.id'`, `resultTtl: 60000`,
 *   `errorTtl: 60000`: `hit('lookup:' + id)`, `pass('lookup:' + id)`, sets the status through the
 *   platform; `{ id, execution }`.
 * - Read methods (HEAD, OPTIONS): `GET /exports/:id` op `export`, idempotent (scope
 *   `user.tenantId`, key required), `target: 'params.id'`: 200 `{ id, execution: hit('export:' +
 *   id) }`. `/preflights/:id` on every method (Nest `@All`, Express `app.all`), idempotent op
 *   `preflight` (`idempotencyKey: 'ignored'`, `target: 'params.id'`) around SingleFlight op
 *   `preflight-flight` (`target: 'params.id'`, `input: []`, `resultTtl: 60000`):
 *   `n = hit('preflight:' + id)`; on `OPTIONS`, `pass('preflight:' + id)`; 200
 *   `{ id, method, execution: n }`. GET routes answer HEAD the platform's way (same handler, no body).
 * - With `raw-response-writes`: `POST /chunks` op `chunks` writes `{"a":` and `1` with
 *   `res.write` and ends with `}` (`Content-Type: application/json`); `POST /double-json` op
 *   `double-json` calls `res.json({ n: 1 })` then `res.json({ n: 2 })`; `POST /json-then-error`
 *   op `json-then-error` calls `res.json({ ok: true })` then passes an error on; `POST /stream` op
 *   `stream` pipes a readable of two chunks into the response. Each `hit`s its op name.
 * - With `multipart-uploads` (multer, file field `document`, text field `amount`; idempotent,
 *   scope `user.tenantId`, key required, default input; each answers 201
 *   `{ execution: hit(op), size: file.size, amount }`): `POST /uploads` op `upload`, memory
 *   storage, no DTO; `POST /uploads/typed` op `upload-typed`, the body validated as
 *   `{ amount: /^\d{1,9}\.\d{2}$/ }`; `POST /uploads/disk` op `upload-disk`, multer's disk storage;
 *   `POST /uploads/unparsed` op `upload-unparsed`, parsed after oncely by a parser oncely is not
 *   told of (Nest: an interceptor of the app's own running multer; Express: multer mounted after
 *   oncely's middleware); `POST /uploads/declared` op `upload-declared`, that parser declared
 *   (Nest: `keyAfterInterceptors: true`; Express: multer mounted before oncely's middleware).
 * - With `next-error`: `POST /next-error` op `next-error` passes on a 422 carrying
 *   `{ message: 'passed on', execution: hit('next-error') }`.
 */
export interface HttpConformanceHarness {
  /** Names the runner, e.g. `'Nest on Fastify'`. */
  readonly name: string;
  /** What the fixture app can express; cases needing anything else are left out, by name. */
  readonly capabilities: readonly HttpConformanceCapability[];
  /** Ways the app registers its catch-all error handler; the first is used by most cases. */
  readonly catchAllRegistrations: readonly string[];
  /** Ways the app registers its serializer; the first is used by most cases. */
  readonly serializerRegistrations: readonly string[];
  /** Status the app's timeout layer answers with. */
  readonly timeoutStatus: number;
  /** How the framework names the two collision routes in a start-up error. */
  readonly collisionRouteNames: readonly [string, string];
  /** The platform's body parser refuses an empty body sent as JSON (Fastify does). */
  readonly refusesEmptyJsonBody?: boolean;
  /**
   * The platform's body parser refuses JSON with `__proto__` keys or a `constructor.prototype`
   * itself, with a 400 of its own (Fastify does, by default).
   */
  readonly refusesPrototypePoisoning?: boolean;
  /** Builds and starts a fresh fixture app with `settings`; rejects on a boot error. */
  start(settings: ConformanceAppSettings): Promise<ConformanceApp>;
}

/** One named, runner-agnostic case: resolves on success, throws an `AssertionError` otherwise. */
export interface HttpConformanceCase {
  /** What the case checks, as a sentence; unique within the suite. */
  readonly name: string;
  /** Starts the case's app, speaks to it and closes it. */
  readonly run: () => Promise<void>;
}

/** The cases a harness runs, and those it leaves out for lack of a capability. */
export interface HttpConformanceSuite {
  /** The cases to register with the runner. */
  readonly cases: readonly HttpConformanceCase[];
  /** The cases not run, for the runner to report rather than skip silently. */
  readonly leftOut: readonly {
    /** The case's name. */
    readonly name: string;
    /** The capabilities it needs and the harness lacks. */
    readonly needs: readonly string[];
  }[];
}
