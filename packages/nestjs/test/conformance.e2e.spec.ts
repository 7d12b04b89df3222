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
            // multer's interceptors are `@nestjs/platform-express`'s.
            ...(platform === 'fastify'
              ? [
                  'an upload parsed by multer, without a DTO: the same upload replays, another file or amount under its key is 422 [needs multipart-uploads]',
                  'an upload parsed by multer into a DTO: a bad field is 400 before anything runs, then the same upload replays and another file is 422 [needs multipart-uploads]',
                  'an upload multer stores on disk is hashed from its file: the same upload replays, another file is 422 [needs multipart-uploads]',
                  'an upload parsed after oncely by a parser it was not told of: 500 body-not-parsed, nothing run or kept [needs multipart-uploads]',
                  'an upload parsed by a parser the route declares (Nest keyAfterInterceptors, Express its own order): keyed on the upload [needs multipart-uploads]',
                  'ten identical uploads at once under one key: 1 execution, the others 409 or the replay [needs multipart-uploads]',
                ]
              : []),
            'a response written in several chunks is captured whole or refused whole, never corrupted [needs raw-response-writes]',
            'a handler answering twice (res.json twice) neither crashes the app nor lets client and replay disagree [needs raw-response-writes]',
            'an error passed on after res.json neither crashes the app nor lets client and replay disagree [needs raw-response-writes]',
            'a streamed response is captured whole or refused whole, never half-sent [needs raw-response-writes]',
            'stores no plaintext of a response body or request secret when encryption is on, and replays byte for byte [needs encrypted-storage]',
          ],
    );
  });
});
