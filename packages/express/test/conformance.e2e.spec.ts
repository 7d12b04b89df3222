import { httpConformanceSuite, type HttpConformanceHarness } from '@oncely/core/testing';
import express from 'express';
// Express 4 under the `express4` alias (root devDependency); see conformance/express4.d.ts.
import express4 from 'express4';
import {
  inMemoryConformanceBackend,
  redisPostgresConformanceBackend,
  type ConformanceBackend,
} from './conformance/conformance-backends.js';
import { expressHarness, type ExpressMajor } from './conformance/express-harness.js';

const runners: [string, ExpressMajor, () => ConformanceBackend][] = [
  ['Express 5', express as ExpressMajor, inMemoryConformanceBackend],
  ['Express 4', express4 as ExpressMajor, inMemoryConformanceBackend],
  // The raw rows and keys are read back: what is stored is what the client received.
  ['Express 5', express as ExpressMajor, redisPostgresConformanceBackend],
];

describe.each(runners)('HTTP conformance: %s', (name, major, makeBackend) => {
  const backend = makeBackend();
  const harness: HttpConformanceHarness = expressHarness(name, major, backend);
  const { cases, leftOut } = httpConformanceSuite(harness);

  afterAll(() => backend.stop());

  describe(`on ${backend.name}`, () => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => c.run(), 30_000);

    it('runs every case of the suite', () => {
      expect(leftOut).toEqual([]);
    });
  });
});
