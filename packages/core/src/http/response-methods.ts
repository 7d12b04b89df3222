import type { ServerResponse } from 'node:http';

/** The methods of a Node response through which anything reaches the client. */
export const RESPONSE_METHODS = [
  'write',
  'end',
  'writeHead',
  'flushHeaders',
  'setHeader',
  'removeHeader',
  'appendHeader',
] as const;

export type ResponseMethodName = (typeof RESPONSE_METHODS)[number];

export type ResponseMethod = (...args: unknown[]) => unknown;

/** What a patched method does now: a replacement, or `undefined` for the response's own. */
export type MethodRoute = (name: ResponseMethodName) => ResponseMethod | undefined;

/** A response whose methods go through a route, until `restore`. */
export interface PatchedResponseMethods {
  /**
   * Runs `write` with the methods the response had before the patch, dropping for its duration
   * anything patched over them since (an inner capture); the patch holds again afterwards.
   */
  withOriginals(write: () => void): void;
  /** Puts the response's methods back as they were (own properties included). */
  restore(): void;
}

/**
 * Routes every method of `RESPONSE_METHODS` of `res` through `route`.
 *
 * Most responses get own properties shadowing their prototype's methods. Adding a property to a
 * response whose prototype was swapped after it was created (Express swaps it to its app's
 * `response` on every request) takes V8's slow path, about 3 µs a property, seven per response;
 * such a response instead gets one prototype of ours in between, made once per app prototype,
 * whose methods look the route up by response. A response that has own methods already
 * (compression middleware patches `res.write`) or that another capture routes through our
 * prototype gets own properties: a prototype would sit behind them.
 */
export function patchResponseMethods(
  res: ServerResponse,
  route: MethodRoute,
): PatchedResponseMethods {
  return swappedPrototype(res) && !routes.has(res) && !hasOwnMethod(res)
    ? new PrototypePatch(res, route)
    : new InstancePatch(res, route);
}

type MethodTable = Record<ResponseMethodName, unknown>;

class InstancePatch implements PatchedResponseMethods {
  readonly #res: MethodTable;
  readonly #saved: { readonly own: boolean; readonly value: ResponseMethod }[] = [];
  readonly #dispatchers: ResponseMethod[] = [];

  constructor(res: ServerResponse, route: MethodRoute) {
    this.#res = res;
    for (const name of RESPONSE_METHODS) {
      const original = this.#res[name] as ResponseMethod;
      this.#saved.push({ own: Object.hasOwn(res, name), value: original });
      const dispatch = (...args: unknown[]) => {
        const method = route(name);
        return method ? method(...args) : original.apply(res, args);
      };
      this.#dispatchers.push(dispatch);
      this.#res[name] = dispatch;
    }
  }

  withOriginals(write: () => void): void {
    RESPONSE_METHODS.forEach((name, i) => (this.#res[name] = this.#saved[i]!.value));
    try {
      write();
    } finally {
      RESPONSE_METHODS.forEach((name, i) => (this.#res[name] = this.#dispatchers[i]));
    }
  }

  restore(): void {
    RESPONSE_METHODS.forEach((name, i) => {
      const saved = this.#saved[i]!;
      if (saved.own) this.#res[name] = saved.value;
      else delete this.#res[name];
    });
  }
}

/** The route of each response patched through a prototype. */
const routes = new WeakMap<object, MethodRoute>();
/** Our prototype in front of each app prototype, made once. */
const routingPrototypes = new WeakMap<object, object>();

class PrototypePatch implements PatchedResponseMethods {
  readonly #res: ServerResponse;
  readonly #route: MethodRoute;
  readonly #prototype: object;
  readonly #routing: object;

  constructor(res: ServerResponse, route: MethodRoute) {
    this.#res = res;
    this.#route = route;
    this.#prototype = Object.getPrototypeOf(res) as object;
    this.#routing = routingPrototypeOf(this.#prototype);
    routes.set(res, route);
    Object.setPrototypeOf(res, this.#routing);
  }

  withOriginals(write: () => void): void {
    const res = this.#res as unknown as MethodTable;
    const shadowing = RESPONSE_METHODS.filter((name) => Object.hasOwn(res, name));
    const patchedSince = shadowing.map((name) => res[name]);
    for (const name of shadowing) res[name] = (this.#prototype as MethodTable)[name];
    routes.delete(this.#res);
    try {
      write();
    } finally {
      routes.set(this.#res, this.#route);
      shadowing.forEach((name, i) => (res[name] = patchedSince[i]));
    }
  }

  restore(): void {
    routes.delete(this.#res);
    // Only our own prototype is taken back: an app may have swapped it since (Express does when
    // a request leaves a mounted sub-app).
    if (Object.getPrototypeOf(this.#res) === this.#routing) {
      Object.setPrototypeOf(this.#res, this.#prototype);
    }
  }
}

function routingPrototypeOf(prototype: object): object {
  let routing = routingPrototypes.get(prototype);
  if (routing) return routing;
  routing = Object.create(prototype) as object;
  for (const name of RESPONSE_METHODS) {
    const original = (prototype as MethodTable)[name] as ResponseMethod;
    const dispatch = function (this: ServerResponse, ...args: unknown[]): unknown {
      const method = routes.get(this)?.(name);
      return method ? method(...args) : original.apply(this, args);
    };
    Object.defineProperty(routing, name, { value: dispatch, writable: true, configurable: true });
  }
  routingPrototypes.set(prototype, routing);
  return routing;
}

/**
 * Whether something swapped the response's prototype after it was created (Express does), and
 * will not swap it again while the response is held. An Express app mounted in another swaps
 * the parent's back when a request leaves it (`next()` from a route in the mounted app), which
 * would take our prototype, and the capture with it, off the response.
 */
function swappedPrototype(res: ServerResponse): boolean {
  const { constructor, app } = res as {
    constructor?: { prototype?: unknown };
    app?: { parent?: unknown };
  };
  return Object.getPrototypeOf(res) !== constructor?.prototype && app?.parent === undefined;
}

function hasOwnMethod(res: ServerResponse): boolean {
  return RESPONSE_METHODS.some((name) => Object.hasOwn(res, name));
}

/**
 * What a response's methods do once oncely has sent it: every write is swallowed (its callback
 * still runs), so a late write of the app never reaches the socket twice.
 */
export function sealedResponseMethods(
  res: ServerResponse,
): Record<ResponseMethodName, ResponseMethod> {
  const swallowCallback = (...args: unknown[]) => {
    const done = args.find((arg) => typeof arg === 'function') as ResponseMethod | undefined;
    if (done) process.nextTick(done);
  };
  return {
    write: (...args) => {
      swallowCallback(...args);
      return true;
    },
    end: (...args) => {
      swallowCallback(...args);
      return res;
    },
    writeHead: () => res,
    flushHeaders: () => undefined,
    setHeader: () => res,
    removeHeader: () => undefined,
    appendHeader: () => res,
  };
}
