import { readFileSync } from 'node:fs';
import { DEFAULT_PROTECTION } from '../../src/call/route-options.js';

/** The rows of the root README's "Defaults" table: option name to its default column. */
function readmeDefaults(): Map<string, string> {
  const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
  const section = readme.split('\n## Defaults\n')[1]?.split('\n## ')[0] ?? '';
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `(\w+)` +\| ([^|]+?) +\|/gm)) {
    rows.set(match[1]!, match[2]!);
  }
  return rows;
}

/** A table cell as the value it states: the number before any "(24 h)", or a quoted string. */
function stated(cell: string): number | string {
  const quoted = /^`([^`]+)`$/.exec(cell);
  if (quoted) return quoted[1]!;
  return Number(cell.replace(/\(.*\)/, '').replace(/\s/g, ''));
}

describe("the README's table of defaults", () => {
  const rows = readmeDefaults();

  it.each(Object.entries(DEFAULT_PROTECTION).filter(([option]) => option !== 'replayHeaders'))(
    'states the default of %s',
    (option, value) => {
      expect(rows.has(option)).toBe(true);
      expect(stated(rows.get(option)!)).toEqual(value);
    },
  );
});
