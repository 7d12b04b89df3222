import { httpConformanceSuite } from '@oncely/core/testing';
import { nestHarness, type NestPlatform } from './conformance/nest-harness.js';

describe.each<NestPlatform>(['express', 'fastify'])('HTTP conformance: Nest on %s', (platform) => {
  const { cases, leftOut } = httpConformanceSuite(nestHarness(platform));

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => c.run(), 30_000);

  it('states the cases it leaves out, by name', () => {
    expect(leftOut.map(({ name, needs }) => `${name} [needs ${needs.join(', ')}]`)).toEqual([
      'does not keep an error passed to next(error): the retry runs again [needs next-error]',
      'a response written in several chunks is captured whole or refused whole, never corrupted [needs raw-response-writes]',
      'a handler answering twice (res.json twice) neither crashes the app nor lets client and replay disagree [needs raw-response-writes]',
      'an error passed on after res.json neither crashes the app nor lets client and replay disagree [needs raw-response-writes]',
      'a streamed response is captured whole or refused whole, never half-sent [needs raw-response-writes]',
    ]);
  });
});
