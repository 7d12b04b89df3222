import {
  Body,
  Controller,
  HttpCode,
  Injectable,
  Post,
  ServiceUnavailableException,
} from '@nestjs/common';
import { canonicalize, type KeyContext } from '@oncely/core';
import { IdempotentKey, KeyIgnore, SingleFlight } from '@oncely/nestjs';
import {
  IsIn,
  IsInt,
  IsISO8601,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { createHash, randomUUID } from 'node:crypto';
import type { Gate } from './support/gate.js';

export class GenerateTextDto {
  @IsIn(['summary', 'reply-draft']) scene!: string;
  @IsIn(['model-a', 'model-b']) model!: string;
  @IsNumber() @Min(0) @Max(1) temperature!: number;
  @IsIn(['en', 'zh']) language!: string;
  // 1 for the first answer; "regenerate" sends 2, 3, …: another answer, asked for on purpose.
  @IsInt() @Min(1) variant!: number;
  @IsString() @MaxLength(20_000) text!: string;
  @IsOptional() @IsISO8601() @KeyIgnore() clientSentAt?: string;
}

/** 128 bits of the text as the fingerprint would see it: raw text never appears in a key. */
export function textDigest(ctx: KeyContext): string {
  const { text } = ctx.body as GenerateTextDto;
  return createHash('sha256').update(canonicalize(text)).digest('hex').slice(0, 32);
}

/** With the client key optional, the identity names everything that decides the answer. */
const generationKey = {
  operation: 'ai-generate',
  // The prompt templates: a new prompt must not replay answers of the old one.
  version: 'prompt-v2',
  scope: ['user.tenantId', 'user.userId'],
  target: [
    'body.scene',
    'body.model',
    'body.temperature',
    'body.language',
    'body.variant',
    textDigest,
  ],
  input: 'body',
} as const;

export interface Generation {
  readonly generationId: string;
  readonly text: string;
}

/** Stands in for the model provider: slow, paid per token, sometimes overloaded. */
@Injectable()
export class TextModel {
  readonly calls: GenerateTextDto[] = [];
  gate: Gate | undefined;
  down = false;

  async complete(dto: GenerateTextDto): Promise<Generation> {
    this.calls.push(dto);
    await this.gate?.pass();
    if (this.down) throw new ServiceUnavailableException('The model provider is overloaded.');
    const text = `[${dto.model}/${dto.language}/${dto.variant}] ${dto.text.trim().slice(0, 40)}`;
    return { generationId: randomUUID(), text };
  }
}

@Controller('ai')
export class GenerationsController {
  constructor(private readonly model: TextModel) {}

  @Post('generations')
  @HttpCode(200)
  // Runs inside the record: two requests with two client keys but one prompt share one call.
  @SingleFlight({ ...generationKey, resultTtl: 0, wait: 60_000, maxDuration: 120_000 })
  @IdempotentKey({
    ...generationKey,
    idempotencyKey: 'optional',
    onBusy: 'wait',
    wait: 60_000,
    maxDuration: 120_000,
    retention: 24 * 60 * 60 * 1000,
  })
  generate(@Body() dto: GenerateTextDto): Promise<Generation> {
    return this.model.complete(dto);
  }
}
