import { KeySpecError } from './key-spec.error.js';

/**
 * Registry of ignored property names, stored on each decorated class's prototype so lookups
 * follow the prototype chain (subclasses inherit). `Symbol.for` keeps one registry even if two
 * copies of this package end up installed side by side.
 */
const IGNORED_PROPERTIES = Symbol.for('@oncely/core:key-ignored-properties');

interface IgnoreRegistryHolder {
  [IGNORED_PROPERTIES]?: ReadonlySet<string>;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Leaves a DTO property out of every key's canonical input (and so out of the fingerprint):
 * client timestamps, tracing fields, anything that does not decide the result. Works on nested
 * DTO instances too. Needs no reflect-metadata and no framework.
 */
export function KeyIgnore(): PropertyDecorator {
  return (target, propertyKey) => {
    if (typeof target === 'function') {
      throw new KeySpecError(
        target.name,
        `static property ${String(propertyKey)}`,
        'cannot carry @KeyIgnore(): only instance properties enter a key. Remove the decorator.',
      );
    }
    if (typeof propertyKey !== 'string') {
      throw new KeySpecError(
        target.constructor.name,
        String(propertyKey),
        'is a symbol-keyed property, which never enters a key. Remove @KeyIgnore() from it.',
      );
    }
    const holder = target as IgnoreRegistryHolder;
    const ignored = new Set(holder[IGNORED_PROPERTIES] ?? NONE);
    ignored.add(propertyKey);
    Object.defineProperty(holder, IGNORED_PROPERTIES, {
      value: ignored,
      configurable: true,
      enumerable: false,
      writable: false,
    });
  };
}

/** Names of the properties marked `@KeyIgnore()` on `type` or any of its base classes. */
export function getKeyIgnoredProperties(type: abstract new (...args: never[]) => unknown) {
  return ignoredPropertiesOf(type.prototype as object);
}

/** Same as `getKeyIgnoredProperties`, from a prototype (what canonicalisation has at hand). */
export function ignoredPropertiesOf(prototype: object | null): ReadonlySet<string> {
  return (prototype as IgnoreRegistryHolder | null)?.[IGNORED_PROPERTIES] ?? NONE;
}
