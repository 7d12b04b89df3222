import { Controller, Get, Injectable, Query } from '@nestjs/common';
import { SingleFlight } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import type { Gate } from './support/gate.js';

/** `GET /search?q=…&tags=a,b&sort=…&page=…`, as the query string delivers it. */
export interface SearchQuery {
  readonly q?: string;
  readonly tags?: string;
  readonly sort?: string;
  readonly page?: string;
}

export interface SearchPage {
  readonly hits: readonly string[];
  readonly page: number;
  readonly searchId: string;
}

/** Stands in for the search cluster: each query costs it, and a burst of them costs a lot. */
@Injectable()
export class CatalogSearch {
  readonly queries: SearchQuery[] = [];
  gate: Gate | undefined;

  async search(query: SearchQuery): Promise<SearchPage> {
    this.queries.push(query);
    await this.gate?.pass();
    const page = Number(query.page ?? '1');
    return { hits: [`${query.q ?? ''}#${page}`], page, searchId: randomUUID() };
  }
}

@Controller('search')
export class SearchController {
  constructor(private readonly catalog: CatalogSearch) {}

  @Get()
  @SingleFlight({
    operation: 'catalog-search',
    // The tenant's catalogue; add 'user.userId' if results were personalised.
    scope: 'user.tenantId',
    target: [
      { path: 'query.sort', optional: true, default: 'relevance' },
      { path: 'query.page', optional: true, default: '1' },
    ],
    input: ['query.q', 'query.tags'],
    // The engine ignores case and repeated spaces, and tags filter as a set: so may the key.
    normalize: {
      'query.q': (q) => q.trim().toLowerCase().replace(/\s+/g, ' '),
      'query.tags': (tags) =>
        [...new Set(tags.split(',').map((tag) => tag.trim()))].sort().join(','),
    },
    // New products may show up a minute late; a burst of one query costs one search.
    resultTtl: 60_000,
  })
  search(@Query() query: SearchQuery): Promise<SearchPage> {
    return this.catalog.search(query);
  }
}
