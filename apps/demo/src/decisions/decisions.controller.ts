import { Controller, Sse, type MessageEvent } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { map, type Observable } from 'rxjs';
import { DecisionFeed } from './decision-feed.service.js';

@ApiTags('observability')
@Controller('decisions')
export class DecisionsController {
  constructor(private readonly feed: DecisionFeed) {}

  /** Every decision oncely takes in this process, as it happens (`text/event-stream`). */
  @Sse()
  @ApiOkResponse({
    description:
      'Server-Sent Events, one `decision` per oncely event: `{ at, mechanism, outcome, operation, key, durationMs }`.',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  stream(): Observable<MessageEvent> {
    return this.feed.stream.pipe(map((decision) => ({ type: 'decision', data: decision })));
  }
}
