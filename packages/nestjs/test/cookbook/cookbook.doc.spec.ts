import { readdirSync, readFileSync } from 'node:fs';

const folder = new URL('./', import.meta.url);
const cookbook = readFileSync(new URL('../../../../docs/cookbook.md', import.meta.url), 'utf8');

interface Scenario {
  /** `1. Order creation`. */
  readonly title: string;
  /** The file the section's code blocks come from, named in its heading. */
  readonly source: string;
  /** The spec its reverse tests are quoted from. */
  readonly spec: string;
  readonly blocks: readonly string[];
  readonly testNames: readonly string[];
}

/** The numbered sections of docs/cookbook.md: `## 1. Order creation (`orders.controller.ts`)`. */
function scenarios(): Scenario[] {
  return cookbook
    .split(/^## (?=\d+\. )/m)
    .slice(1)
    .map((section) => {
      const heading = section.slice(0, section.indexOf('\n'));
      const source = /^(.+) \(`([\w.-]+\.ts)`\)$/.exec(heading);
      const spec = /\*\*Reverse tests\*\* \(`([\w.-]+\.spec\.ts)`\)/.exec(section);
      if (!source || !spec) {
        throw new Error(`docs/cookbook.md: "${heading}" must name its source file and its spec.`);
      }
      return {
        title: source[1]!,
        source: source[2]!,
        spec: spec[1]!,
        blocks: [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!),
        testNames: [...section.matchAll(/› "([^"]+)"/g)].map((match) =>
          match[1]!.replace(/\s+/g, ' '),
        ),
      };
    });
}

/** Class members are shown dedented: the block matches at the indentation it has in the file. */
function appearsIn(text: string, block: string): boolean {
  return ['', '  ', '    '].some((indent) =>
    text.includes(
      block
        .split('\n')
        .map((line) => (line === '' ? line : indent + line))
        .join('\n'),
    ),
  );
}

const read = (file: string) => readFileSync(new URL(file, folder), 'utf8');

describe('docs/cookbook.md', () => {
  const all = scenarios();

  it('walks through the ten scenarios of the reference texts, in order', () => {
    expect(all.map((scenario) => scenario.title)).toEqual([
      '1. Order creation',
      '2. Payment',
      '3. Inventory deduction',
      '4. Notification sending',
      '5. File processing',
      '6. Report export',
      '7. AI text generation',
      '8. Message consumption',
      '9. Scheduled job',
      '10. Search-result caching',
    ]);
  });

  it.each(all)('$title: shows code of $source, word for word', ({ source, blocks }) => {
    const text = read(source);
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.filter((block) => !appearsIn(text, block))).toEqual([]);
  });

  it.each(all)('$title: quotes reverse tests that $spec runs', ({ spec, testNames }) => {
    const text = read(spec);
    expect(testNames.length).toBeGreaterThan(0);
    expect(testNames.filter((name) => !text.includes(name))).toEqual([]);
  });

  it('covers every scenario file and spec of the folder', () => {
    const files = readdirSync(folder).filter((file) => file.endsWith('.ts'));
    const cited = all.flatMap((scenario) => [scenario.source, scenario.spec]);
    expect(files.filter((file) => !cited.includes(file)).sort()).toEqual(['cookbook.doc.spec.ts']);
  });
});
