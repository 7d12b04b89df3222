import { httpConformanceSuite } from '@oncely/core/testing';
import express from 'express';
// Express 4 under the `express4` alias (root devDependency); see conformance/express4.d.ts.
import express4 from 'express4';
import { expressHarness, type ExpressMajor } from './conformance/express-harness.js';

describe.each([
  ['Express 5', express as ExpressMajor],
  ['Express 4', express4 as ExpressMajor],
])('HTTP conformance: %s', (name, major) => {
  const { cases, leftOut } = httpConformanceSuite(expressHarness(name, major));

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => c.run(), 30_000);

  it('runs every case of the suite', () => {
    expect(leftOut).toEqual([]);
  });
});
