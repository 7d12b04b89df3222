// The root README's code examples that compat apps run as they are: each block is the verbatim
// content of a file in one app, so an edit to either side that is not made to the other fails
// the matrix with the lines that differ.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Which fenced block of which README section each app runs: the `index`-th block in language
 * `lang` between `heading` and the next heading of the same or a higher level.
 */
export const README_EXAMPLES = [
  { heading: '## Quick start', lang: 'ts', index: 0, file: 'nest11-jest29/src/app.module.ts' },
  {
    heading: '### Options from `@nestjs/config`',
    lang: 'ts',
    index: 0,
    file: 'nest11-cjs/src/app.module.ts',
  },
  {
    heading: '### Options from `@nestjs/config`',
    lang: 'ts',
    index: 1,
    file: 'nest11-cjs/src/oncely.config.ts',
  },
  {
    heading: '## Express quick start',
    lang: 'js',
    index: 0,
    file: 'express4-cjs/src/quick-start.js',
  },
  {
    heading: '## Express quick start',
    lang: 'js',
    index: 1,
    file: 'express5-esm/src/quick-start.js',
  },
];

/** The README's section under `heading`, that heading line excluded. */
function section(readme, heading) {
  const lines = readme.split('\n');
  const starts = lines.flatMap((line, at) => (line === heading ? [at] : []));
  if (starts.length !== 1) {
    throw new Error(`README.md has ${starts.length} headings "${heading}"; expected exactly one`);
  }
  const level = heading.indexOf(' ');
  const end = lines.findIndex(
    (line, at) => at > starts[0] && /^#+ /.test(line) && line.indexOf(' ') <= level,
  );
  return lines.slice(starts[0] + 1, end === -1 ? undefined : end).join('\n');
}

function block(readme, { heading, lang, index }) {
  const blocks = [...section(readme, heading).matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)]
    .filter((match) => match[1] === lang)
    .map((match) => match[2]);
  if (blocks[index] === undefined) {
    throw new Error(`README.md has no ${lang} block #${index + 1} under "${heading}"`);
  }
  return blocks[index];
}

/** A line diff (longest common subsequence): `-` README only, `+` file only. */
export function lineDiff(expected, actual) {
  const a = expected.split('\n');
  const b = actual.split('\n');
  const common = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i][j] =
        a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || common[i + 1][j] >= common[i][j + 1])) {
      out.push(`  -${String(i + 1).padStart(4)} | ${a[i++]}`);
    } else {
      out.push(`  +${String(j + 1).padStart(4)} | ${b[j++]}`);
    }
  }
  return out.join('\n');
}

/**
 * The README examples that differ from the files of `apps`, each as a message with the lines
 * that differ; empty when every one matches.
 */
export async function readmeDrift(root, apps) {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const drift = [];
  for (const example of README_EXAMPLES) {
    if (!apps.includes(example.file.split('/')[0])) continue;
    const expected = block(readme, example);
    const actual = await readFile(join(root, 'compat', example.file), 'utf8');
    if (expected === actual) continue;
    drift.push(
      `README.md's ${example.lang} block #${example.index + 1} under "${example.heading}" ` +
        `differs from compat/${example.file}, which the matrix runs; make them the same ` +
        `(- README line, + file line):\n${lineDiff(expected, actual)}`,
    );
  }
  return drift;
}
