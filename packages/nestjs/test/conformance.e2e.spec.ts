import { httpConformanceSuite, type HttpConformanceSelection } from '@oncely/core/testing';
import {
  encryptedRedisPostgresConformanceBackend,
  inMemoryConformanceBackend,
  redisPostgresConformanceBackend,
  type ConformanceBackend,
} from '../../express/test/conformance/conformance-backends.js';
import { nestHarness, type NestPlatform } from './conformance/nest-harness.js';

const runners: [NestPlatform, () => ConformanceBackend, HttpConformanceSelection][] = [
  ['express', inMemoryConformanceBackend, {}],
  ['fastify', inMemoryConformanceBackend, {}],
  // The raw rows and keys are read back: what is stored is what the client received.
  ['express', redisPostgresConformanceBackend, {}],
  // Encryption changes only how data is stored: the cases resting on stored data run again.
  ['express', encryptedRedisPostgresConformanceBackend, { tags: ['stored-data'] }],
];

describe.each(runners)('HTTP conformance: Nest on %s', (platform, makeBackend, selection) => {
  const backend = makeBackend();
  const { cases, leftOut } = httpConformanceSuite(nestHarness(platform, backend), selection);

  afterAll(() => backend.stop());

  describe(`on ${backend.name}`, () => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => c.run(), 30_000);
  });

  it('states the cases it leaves out, by name', () => {
    expect(leftOut.map(({ name, needs }) => `${name} [needs ${needs.join(', ')}]`)).toEqual(
      // The encrypted runner takes only the stored-data cases, all of which Nest can express.
      backend.encryption
        ? []
        : [
            ...(platform === 'express'
              ? ['replays a binary body byte for byte [needs binary-body]']
              : []),
            'does not keep an error passed to next(error): the retry runs again [needs next-error]',
            'a response written in several chunks is captured whole or refused whole, never corrupted [needs raw-response-writes]',
            'a handler answering twice (res.json twice) neither crashes the app nor lets client and replay disagree [needs raw-response-writes]',
            'an error passed on after res.json neither crashes the app nor lets client and replay disagree [needs raw-response-writes]',
            'a streamed response is captured whole or refused whole, never half-sent [needs raw-response-writes]',
            'stores no plaintext of a response body or request secret when encryption is on, and replays byte for byte [needs encrypted-storage]',
          ],
    );
  });
});
