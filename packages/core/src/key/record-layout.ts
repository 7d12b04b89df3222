import { NEEDS_CARE, quotePlain, sortByKey } from './canonical-json.js';
import { escapeKey } from './canonical-string.js';

/**
 * How to write the members of every object that has one prototype and one list of own keys, as
 * instances of one DTO class do: which keys, in canonical order, with their JSON names written
 * once. Working this out per object (checking each key, sorting, escaping, quoting) was most of
 * the cost of canonicalising a DTO.
 */
export interface RecordLayout {
  /** The own keys this layout was made for, in `Object.keys` order. */
  readonly keys: readonly string[];
  /** The `@KeyIgnore()` set it left out: a decorator applied later makes a new set. */
  readonly ignored: ReadonlySet<string>;
  /** The members written, in canonical order. */
  readonly members: readonly LayoutMember[];
}

/**
 * One member and every token that can write its name (leading `$` doubled): opening the object
 * or after a comma, with or without the closing quote a string before it still owes, followed by
 * a value or by the opening quote of a string. The canonicalizer writes each as one piece.
 */
export interface LayoutMember {
  /** Its index in `keys`, and so in `Object.values`. */
  readonly index: number;
  readonly key: string;
  /** `{"name":` and `{"name":"`. */
  readonly first: string;
  readonly firstString: string;
  /** `,"name":` and `,"name":"`. */
  readonly later: string;
  readonly laterString: string;
  /** `","name":` and `","name":"`. */
  readonly afterString: string;
  readonly afterStringString: string;
}

/**
 * The token that writes `member`'s name: with the object's `{` for the first member, else after
 * a comma, bringing the closing quote a string before it owes, and opening its own value's quote
 * when that is a string.
 */
export function memberName(
  member: LayoutMember,
  first: boolean,
  quoteOwed: boolean,
  string: boolean,
): string {
  if (first) {
    return string ? member.firstString : member.first;
  }
  if (quoteOwed) {
    return string ? member.afterStringString : member.afterString;
  }
  return string ? member.laterString : member.later;
}

/** Layouts kept per prototype: plain-object DTOs come in a few shapes, not in hundreds. */
const LAYOUTS_PER_PROTOTYPE = 8;
/** Objects with more keys are dictionaries, not DTOs: a layout would rarely be used twice. */
const MAX_LAYOUT_KEYS = 64;

/**
 * Recently used layouts per prototype, most recent first. A prototype is only entered once an
 * instance of it was found to be a plain object (see `knownLayouts`); a class's entry goes when
 * the class does.
 */
const layoutsByPrototype = new WeakMap<object, RecordLayout[]>();
const objectPrototypeLayouts: RecordLayout[] = [];
const nullPrototypeLayouts: RecordLayout[] = [];

/**
 * The layouts kept for `prototype`: always for plain and null-prototype objects, and for a class
 * once one of its instances was found to be a plain object. Its next instances then skip the
 * checks for Dates, Maps, Sets and byte arrays: all instances of a class are alike there, unless
 * an object was given another type's prototype by hand (which fails those checks' own paths too,
 * its prototype lacking the methods they lead to). A `Symbol.toStringTag` an instance sets for
 * itself is still checked by the caller.
 */
export function knownLayouts(prototype: object | null): RecordLayout[] | undefined {
  if (prototype === Object.prototype) {
    return objectPrototypeLayouts;
  }
  return prototype === null ? nullPrototypeLayouts : layoutsByPrototype.get(prototype);
}

/** Starts keeping layouts for a prototype whose instance was just found to be a plain object. */
export function plainPrototypeLayouts(prototype: object): RecordLayout[] {
  const layouts: RecordLayout[] = [];
  layoutsByPrototype.set(prototype, layouts);
  return layouts;
}

/**
 * The layout for an object with these own keys, from and into the prototype's `layouts`, or
 * `undefined` when a key needs NFC or escaping (then each object is written member by member).
 */
export function recordLayout(
  layouts: RecordLayout[],
  keys: readonly string[],
  ignored: ReadonlySet<string>,
): RecordLayout | undefined {
  for (let index = 0; index < layouts.length; index++) {
    const layout = layouts[index] as RecordLayout;
    if (layout.ignored === ignored && sameKeys(layout.keys, keys)) {
      if (index > 0) {
        layouts.splice(index, 1);
        layouts.unshift(layout);
      }
      return layout;
    }
  }
  const layout = newLayout(keys, ignored);
  if (layout && keys.length <= MAX_LAYOUT_KEYS) {
    layouts.unshift(layout);
    layouts.length = Math.min(layouts.length, LAYOUTS_PER_PROTOTYPE);
  }
  return layout;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) {
    return false;
  }
  for (let index = 0; index < a.length; index++) {
    if (a[index] !== b[index]) {
      return false;
    }
  }
  return true;
}

function newLayout(
  keys: readonly string[],
  ignored: ReadonlySet<string>,
): RecordLayout | undefined {
  const order: number[] = [];
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    if (NEEDS_CARE.test(key)) {
      return undefined;
    }
    if (!ignored.has(key)) {
      order.push(index);
    }
  }
  // Plain keys (see NEEDS_CARE) are their own NFC form and their own JSON text, and doubling a
  // leading `$` keeps their order, so sorting the raw keys sorts the canonical ones.
  sortByKey(order, keys);
  return { keys: [...keys], ignored, members: order.map((index) => layoutMember(keys, index)) };
}

function layoutMember(keys: readonly string[], index: number): LayoutMember {
  const key = keys[index] as string;
  const name = `${quotePlain(escapeKey(key))}:`;
  return {
    index,
    key,
    first: `{${name}`,
    firstString: `{${name}"`,
    later: `,${name}`,
    laterString: `,${name}"`,
    afterString: `",${name}`,
    afterStringString: `",${name}"`,
  };
}
