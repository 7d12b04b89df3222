import { ACME, startCookbookApp, type Caller, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import {
  FileConversionsController,
  FileConverter,
  type ConvertFileDto,
} from './file-conversions.controller.js';

describe('cookbook: file processing (SingleFlight on the file version, cached an hour)', () => {
  let shop: CookbookApp;
  let converter: FileConverter;

  beforeAll(async () => {
    shop = await startCookbookApp({
      controllers: [FileConversionsController],
      providers: [FileConverter],
    });
    converter = shop.get(FileConverter);
  });

  afterAll(() => shop.close());

  const file = (fileId: string, changes: Partial<ConvertFileDto> = {}) => ({
    fileId,
    etag: 'v3',
    downloadUrl: `https://files.example.test/${fileId}?token=t-1&expires=100`,
    format: 'webp',
    quality: 80,
    ...changes,
  });
  const convert = (body: object, caller: Caller = ACME) =>
    shop.post('/files/conversions', body, caller);
  const runs = (fileId: string) => converter.runs.filter((dto) => dto.fileId === fileId).length;

  it('converts concurrent identical requests once; the others share the output', async () => {
    converter.gate = new Gate();
    const first = convert(file('file-busy')).then((response) => response);
    await converter.gate.entered;
    const duplicates = [1, 2, 3].map(() => convert(file('file-busy')).then((r) => r));
    converter.gate.open();
    converter.gate = undefined;
    const responses = await Promise.all([first, ...duplicates]);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    for (const response of responses) expect(response.body).toEqual(responses[0].body);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(3);
    expect(runs('file-busy')).toBe(1);
    expect(shop.keys('shop:file-convert:v1', 'executed')).toContainEqual(
      expect.stringMatching(/^shop:file-convert:v1:acme:file-busy%40v3:[0-9a-f]{32}$/),
    );
  });

  it('serves the same version again from the cache, whatever signed URL it comes with', async () => {
    const first = await convert(file('file-cached'));
    const later = await convert(
      file('file-cached', {
        downloadUrl: 'https://cdn-b.example.test/file-cached?token=t-2&expires=200',
      }),
    );
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body).toEqual(first.body);
    expect(runs('file-cached')).toBe(1);
  });

  it('answers a corrupt file’s retry with the kept 422, converting it once', async () => {
    const first = await convert(file('file-corrupt', { etag: 'corrupt' }));
    const again = await convert(file('file-corrupt', { etag: 'corrupt' }));
    expect(first.status).toBe(422);
    expect(again.status).toBe(422);
    expect(runs('file-corrupt')).toBe(1);
  });

  describe('reverse tests: alike, yet different conversions', () => {
    it('converts a new version of the same file', async () => {
      const v3 = await convert(file('file-versions', { etag: 'v3' }));
      const v4 = await convert(file('file-versions', { etag: 'v4' }));
      expect(v4.headers['idempotent-replayed']).toBeUndefined();
      expect(v4.body.outputId).not.toBe(v3.body.outputId);
      expect(runs('file-versions')).toBe(2);
    });

    it('converts the same version to another format, or at another quality', async () => {
      await convert(file('file-options'));
      await convert(file('file-options', { format: 'avif' }));
      await convert(file('file-options', { quality: 60 }));
      expect(runs('file-options')).toBe(3);
    });

    it("converts another tenant's file with the same id", async () => {
      await convert(file('file-tenants'), { tenant: 'acme' });
      await convert(file('file-tenants'), { tenant: 'globex' });
      expect(runs('file-tenants')).toBe(2);
    });
  });
});
