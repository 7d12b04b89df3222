/**
 * Counts the calls `@oncely/nestjs` makes into `@oncely/core`: every function and constructor of
 * the core entries it imports, and every method of what they return (the engine, its executor, a
 * capture), by name. Calls inside core go straight through (core imports its own files), so what
 * is counted is exactly the boundary. Property reads, getters included, are not calls.
 */
export class CoreCallSpy {
  readonly #calls: string[] = [];
  #counting = false;

  /** The calls counted since `start`, in order. */
  get calls(): readonly string[] {
    return [...this.#calls];
  }

  start(): void {
    this.#calls.length = 0;
    this.#counting = true;
  }

  stop(): readonly string[] {
    this.#counting = false;
    return this.calls;
  }

  /** `entry`'s exports, each counted under its export name. */
  wrapEntry(entry: Record<string, unknown>): Record<string, unknown> {
    const wrapped: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(entry)) wrapped[name] = this.#wrap(value, name);
    return wrapped;
  }

  #count(name: string): void {
    if (this.#counting) this.#calls.push(name);
  }

  #wrap(value: unknown, name: string): unknown {
    if (typeof value === 'function') return this.#wrapFunction(value as Fn, name);
    return value;
  }

  #wrapFunction(fn: Fn, name: string): unknown {
    if (isClass(fn)) {
      const proxy: object = new Proxy(fn, {
        construct: (target, args, newTarget) => {
          this.#count(`new ${name}`);
          const made = Reflect.construct(target, args, newTarget) as object;
          // A subclass of the app's, or an error to throw, stays itself.
          return newTarget !== proxy || made instanceof Error
            ? made
            : (this.#wrapResult(made, name) as object);
        },
        get: (target, property) => {
          const member = Reflect.get(target, property, target) as unknown;
          if (property === 'prototype' || typeof member !== 'function') return member;
          return this.#method(target, member as Fn, `${name}.${String(property)}`);
        },
      });
      return proxy;
    }
    return (...args: unknown[]) => {
      this.#count(name);
      return this.#wrapResult(fn(...args), name);
    };
  }

  /** What a core call returns: an object of core's (not data) has its methods counted. */
  #wrapResult(result: unknown, name: string): unknown {
    if (typeof result !== 'object' || result === null || result instanceof Promise) return result;
    const prototype = Object.getPrototypeOf(result) as object | null;
    if (prototype === Object.prototype || prototype === null || Array.isArray(result))
      return result;
    const label = result.constructor?.name ?? name;
    return new Proxy(result, {
      get: (target, property) => {
        const member = Reflect.get(target, property, target) as unknown;
        if (typeof member === 'function' && property !== 'constructor') {
          return this.#method(target, member as Fn, `${label}.${String(property)}`);
        }
        return this.#wrapResult(member, `${label}.${String(property)}`);
      },
    });
  }

  #method(target: object, member: Fn, label: string): Fn {
    return (...args: unknown[]) => {
      this.#count(label);
      return this.#wrapResult(member.apply(target, args), label);
    };
  }
}

type Fn = (...args: unknown[]) => unknown;

function isClass(fn: Fn): boolean {
  return /^class\b/.test(Function.prototype.toString.call(fn));
}
