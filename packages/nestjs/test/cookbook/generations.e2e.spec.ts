import { ACME, startCookbookApp, type Caller, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import {
  GenerationsController,
  TextModel,
  type GenerateTextDto,
} from './generations.controller.js';

describe('cookbook: AI text generation (idempotency record + SingleFlight)', () => {
  let shop: CookbookApp;
  let model: TextModel;

  beforeAll(async () => {
    shop = await startCookbookApp({ controllers: [GenerationsController], providers: [TextModel] });
    model = shop.get(TextModel);
  });

  afterAll(() => shop.close());

  /** Each test writes its own text, so that its model calls are counted apart. */
  const prompt = (text: string, changes: Partial<GenerateTextDto> = {}) => ({
    scene: 'summary',
    model: 'model-a',
    temperature: 0.2,
    language: 'en',
    variant: 1,
    text,
    ...changes,
  });
  const generate = (body: object, caller: Caller = ACME) =>
    shop.post('/ai/generations', body, caller);
  const calls = (text: string) => model.calls.filter((dto) => dto.text.trim() === text).length;

  it('generates concurrent identical prompts once; every request gets that answer', async () => {
    model.gate = new Gate();
    const first = generate(prompt('Concurrent text.')).then((response) => response);
    await model.gate.entered;
    const duplicates = [1, 2, 3].map(() => generate(prompt('Concurrent text.')).then((r) => r));
    model.gate.open();
    model.gate = undefined;
    const responses = await Promise.all([first, ...duplicates]);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    for (const response of responses) expect(response.body).toEqual(responses[0].body);
    expect(calls('Concurrent text.')).toBe(1);
  });

  it('replays a retry without a key, whatever its send time, trace id or outer spaces', async () => {
    const first = await generate({
      ...prompt('Retried text.'),
      clientSentAt: '2026-07-17T10:00:01Z',
    }).set('x-request-id', 'trace-a');
    const retry = await generate({
      ...prompt('  Retried text.\n'),
      clientSentAt: '2026-07-17T10:00:09Z',
    }).set('x-request-id', 'trace-b');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(calls('Retried text.')).toBe(1);
    expect(shop.keys('shop:ai-generate:prompt-v2', 'executed')).toContainEqual(
      expect.stringMatching(
        /^shop:ai-generate:prompt-v2:acme,u-1:summary,model-a,0\.2,en,1,[0-9a-f]{32}$/,
      ),
    );
  });

  it('shares one model call between two client keys sent at once (two tabs)', async () => {
    model.gate = new Gate();
    const tab1 = generate(prompt('Two tabs.'))
      .set('idempotency-key', 'tab-1')
      .then((r) => r);
    await model.gate.entered;
    const tab2 = generate(prompt('Two tabs.'))
      .set('idempotency-key', 'tab-2')
      .then((r) => r);
    model.gate.open();
    model.gate = undefined;
    const [one, two] = await Promise.all([tab1, tab2]);
    expect(two.body).toEqual(one.body);
    expect(calls('Two tabs.')).toBe(1);
    const retry = await generate(prompt('Two tabs.')).set('idempotency-key', 'tab-2');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(calls('Two tabs.')).toBe(1);
  });

  it('keeps nothing of an overloaded model: the retry generates', async () => {
    model.down = true;
    const failed = await generate(prompt('Overloaded text.'));
    model.down = false;
    const retry = await generate(prompt('Overloaded text.'));
    expect(failed.status).toBe(503);
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(calls('Overloaded text.')).toBe(2);
  });

  describe('reverse tests: alike, yet different generations', () => {
    it('generates again for another model, temperature, language or scene', async () => {
      await generate(prompt('Settings text.'));
      await generate(prompt('Settings text.', { model: 'model-b' }));
      await generate(prompt('Settings text.', { temperature: 0.8 }));
      await generate(prompt('Settings text.', { language: 'zh' }));
      await generate(prompt('Settings text.', { scene: 'reply-draft' }));
      expect(calls('Settings text.')).toBe(5);
    });

    it('generates again when the text changes inside, not only at its ends', async () => {
      await generate(prompt('Java 并发'));
      await generate(prompt('Java并发'));
      expect(calls('Java 并发') + calls('Java并发')).toBe(2);
    });

    it('generates for a client key reused with another text: the text is in the identity', async () => {
      const first = await generate(prompt('First text.')).set('idempotency-key', 'k-reused');
      const other = await generate(prompt('Second text.')).set('idempotency-key', 'k-reused');
      expect([first.status, other.status]).toEqual([200, 200]);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(calls('First text.') + calls('Second text.')).toBe(2);
    });

    it('generates a new answer on regenerate (variant 2)', async () => {
      const first = await generate(prompt('Regenerated text.', { variant: 1 }));
      const second = await generate(prompt('Regenerated text.', { variant: 2 }));
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.body.generationId).not.toBe(first.body.generationId);
      expect(calls('Regenerated text.')).toBe(2);
    });

    it("generates another user's answer to the same prompt: answers are private", async () => {
      await generate(prompt('Private text.'), { tenant: 'acme', user: 'u-1' });
      await generate(prompt('Private text.'), { tenant: 'acme', user: 'u-2' });
      expect(calls('Private text.')).toBe(2);
    });
  });
});
