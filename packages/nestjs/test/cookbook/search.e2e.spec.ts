import { ACME, startCookbookApp, type Caller, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import { CatalogSearch, SearchController } from './search.controller.js';

describe('cookbook: search-result caching (SingleFlight, cached a minute)', () => {
  let shop: CookbookApp;
  let catalog: CatalogSearch;

  beforeAll(async () => {
    shop = await startCookbookApp({ controllers: [SearchController], providers: [CatalogSearch] });
    catalog = shop.get(CatalogSearch);
  });

  afterAll(() => shop.close());

  const search = (query: string, caller: Caller = ACME) => shop.fetch(`/search?${query}`, caller);
  /** Each test searches its own words, so that its searches are counted apart. */
  const searches = (word: string) =>
    catalog.queries.filter((query) => query.q?.toLowerCase().includes(word)).length;

  it('searches a burst of one query once; every request gets that page', async () => {
    catalog.gate = new Gate();
    const first = search('q=burst').then((response) => response);
    await catalog.gate.entered;
    const burst = [1, 2, 3].map(() => search('q=burst').then((r) => r));
    catalog.gate.open();
    catalog.gate = undefined;
    const responses = await Promise.all([first, ...burst]);
    for (const response of responses) expect(response.body).toEqual(responses[0].body);
    expect(searches('burst')).toBe(1);
    expect(shop.keys('shop:catalog-search:v1', 'executed')).toContainEqual(
      expect.stringMatching(/^shop:catalog-search:v1:acme:relevance,1:[0-9a-f]{32}$/),
    );
  });

  it('serves what means the same search from the cache', async () => {
    const first = await search('q=red%20shoes&tags=sale,new');
    const alike = [
      'q=Red%20%20Shoes&tags=sale,new',
      'q=red%20shoes&tags=new,sale',
      'q=red%20shoes&tags=sale,new&page=1',
      'q=red%20shoes&tags=sale,new&sort=relevance',
    ];
    for (const query of alike) {
      const response = await search(query).set('x-request-id', `trace-${query}`);
      expect(response.headers['idempotent-replayed']).toBe('true');
      expect(response.body).toEqual(first.body);
    }
    expect(searches('shoes')).toBe(1);
  });

  it('refuses a search without a tenant (400), searching nothing', async () => {
    const anonymous = await search('q=anonymous', {});
    expect(anonymous.status).toBe(400);
    expect(searches('anonymous')).toBe(0);
  });

  describe('reverse tests: alike, yet different searches', () => {
    it('searches another page, another sort order, another tag, other words', async () => {
      await search('q=boots&tags=sale');
      await search('q=boots&tags=sale&page=2');
      await search('q=boots&tags=sale&sort=price-asc');
      await search('q=boots&tags=new');
      await search('q=boots%20leather&tags=sale');
      expect(searches('boots')).toBe(5);
    });

    it("searches another tenant's catalogue for the same words", async () => {
      await search('q=scarf', { tenant: 'acme' });
      await search('q=scarf', { tenant: 'globex' });
      expect(searches('scarf')).toBe(2);
    });
  });
});
