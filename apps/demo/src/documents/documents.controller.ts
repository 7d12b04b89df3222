import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { KeyContext } from '@oncely/core';
import { IdempotentKey, SingleFlight } from '@oncely/nestjs';
import { createHash, randomUUID } from 'node:crypto';
import { DemoRoute } from '../identity/demo-route.decorator.js';
import type { DemoRequest } from '../identity/demo-principal.js';
import { ApiProblemResponses } from '../problems/api-problem-responses.decorator.js';
import { Problems } from '../problems/documented-problems.js';
import { simulateWork } from '../simulation/simulate-work.js';
import { ExecutionStats } from '../stats/execution-stats.service.js';
import { SummarizeDocumentDto, SummaryDto } from './summarize-document.dto.js';

export const DOCUMENT_SUMMARY = 'document-summary';

/**
 * 128-bit digest of the document text as the key's canonical form would see it (NFC, CRLF → LF,
 * trimmed): the text decides the summary, but raw text must never appear in a key.
 */
export function contentDigest(ctx: KeyContext): string {
  const content = (ctx.body as { content?: unknown } | undefined)?.content;
  if (typeof content !== 'string') return '';
  const normalized = content.normalize('NFC').replace(/\r\n/g, '\n').trim();
  return createHash('sha256').update(normalized).digest('hex').slice(0, 32);
}

/**
 * With the client key optional, the identity must name everything that decides the summary:
 * without a key, the same document, text, model, language and prompt is the same request (a
 * replay); changing any of them is new work, never a 422. `clientSentAt` is `@KeyIgnore()`d.
 */
const summaryKey = {
  operation: DOCUMENT_SUMMARY,
  scope: 'user.tenantId',
  target: ['params.docId', 'body.model', 'body.language', 'body.promptVersion', contentDigest],
  input: 'body',
} as const;

@ApiTags('documents')
@Controller('documents')
export class DocumentsController {
  constructor(private readonly stats: ExecutionStats) {}

  /** An AI-style summary: concurrent duplicates share one run, retries replay it for 24 h. */
  @Post(':docId/summary')
  @HttpCode(200)
  @DemoRoute('optional')
  @SingleFlight({ ...summaryKey, description: 'Runs one summary per document version at a time' })
  // The record is checked before the flight: duplicates must wait for it, not get a 409.
  @IdempotentKey({
    ...summaryKey,
    idempotencyKey: 'optional',
    onBusy: 'wait',
    description: 'Keeps a summary for 24 h, replayed to every retry of it',
  })
  @ApiOperation({ summary: 'Summarise a document (SingleFlight + IdempotentKey, header optional)' })
  @ApiParam({ name: 'docId', example: 'doc-8899' })
  @ApiOkResponse({ type: SummaryDto })
  @ApiProblemResponses(
    Problems.invalidBody,
    Problems.keyMalformed,
    Problems.invalidHeader,
    Problems.tenantMissing,
    Problems.inFlight,
    Problems.tooLarge,
    Problems.mismatch,
    Problems.coordinatorDown,
  )
  async summarize(
    @Param('docId') docId: string,
    @Body() body: SummarizeDocumentDto,
    @Req() request: DemoRequest,
  ): Promise<SummaryDto> {
    const executionId = randomUUID();
    this.stats.recordExecution(DOCUMENT_SUMMARY);
    await simulateWork(request);
    return { docId, summary: summarize(body), executionId };
  }
}

/** A stand-in for the model: the first two sentences, tagged with what produced them. */
function summarize(body: SummarizeDocumentDto): string {
  const sentences = body.content
    .trim()
    .split(/(?<=[.!?])\s+/)
    .slice(0, 2)
    .join(' ');
  const text = sentences.length > 280 ? `${sentences.slice(0, 279)}…` : sentences;
  return `[${body.model}/${body.language}/${body.promptVersion}] ${text}`;
}
