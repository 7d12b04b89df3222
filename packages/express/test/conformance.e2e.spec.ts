import {
  httpConformanceSuite,
  type HttpConformanceHarness,
  type HttpConformanceSelection,
} from '@oncely/core/testing';
import express from 'express';
// Express 4 under the `express4` alias (root devDependency); see conformance/express4.d.ts.
import express4 from 'express4';
import {
  encryptedRedisPostgresConformanceBackend,
  inMemoryConformanceBackend,
  redisPostgresConformanceBackend,
  type ConformanceBackend,
} from './conformance/conformance-backends.js';
import { expressHarness, type ExpressMajor } from './conformance/express-harness.js';

const ENCRYPTED_CASE =
  'stores no plaintext of a response body or request secret when encryption is on, and replays byte for byte';

/** Express cannot tell a timeout middleware's answer from the route's: see its README. */
const OUTER_ANSWER_CASES = [
  'holds the key until the handler settles when the timeout layer answers first: one execution, then the serialized replay',
  'a handler passing maxDuration after the timeout layer answered frees its key, and the app keeps running',
];

const runners: [string, ExpressMajor, () => ConformanceBackend, HttpConformanceSelection][] = [
  ['Express 5', express as ExpressMajor, inMemoryConformanceBackend, {}],
  ['Express 4', express4 as ExpressMajor, inMemoryConformanceBackend, {}],
  // The raw rows and keys are read back: what is stored is what the client received.
  ['Express 5', express as ExpressMajor, redisPostgresConformanceBackend, {}],
  // Encryption changes only how data is stored: the cases resting on stored data run again.
  [
    'Express 5',
    express as ExpressMajor,
    encryptedRedisPostgresConformanceBackend,
    { tags: ['stored-data'] },
  ],
];

describe.each(runners)('HTTP conformance: %s', (name, major, makeBackend, selection) => {
  const backend = makeBackend();
  const harness: HttpConformanceHarness = expressHarness(name, major, backend);
  const { cases, leftOut } = httpConformanceSuite(harness, selection);

  afterAll(() => backend.stop());

  describe(`on ${backend.name}`, () => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => c.run(), 30_000);

    it('states the cases it leaves out, by name', () => {
      expect(leftOut.map(({ name, needs }) => `${name} [needs ${needs.join(', ')}]`)).toEqual([
        ...(selection.tags
          ? []
          : OUTER_ANSWER_CASES.map((name) => `${name} [needs outer-answer-detection]`)),
        ...(backend.encryption ? [] : [`${ENCRYPTED_CASE} [needs encrypted-storage]`]),
      ]);
    });
  });
});
