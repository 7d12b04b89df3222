import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { KeyIgnore } from '@oncely/core';
import { IsISO8601, IsOptional, IsString, Length, Matches } from 'class-validator';

export class SummarizeDocumentDto {
  @ApiProperty({ example: 'Oncely makes sure duplicate requests have one effect. …' })
  @IsString()
  @Length(1, 50_000)
  content!: string;

  @ApiProperty({ example: 'summarizer-small' })
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, {
    message: 'model must be 1 to 64 letters, digits, ".", "_" or "-"',
  })
  model!: string;

  @ApiProperty({ example: 'en', description: 'BCP 47 language tag such as `en` or `pt-BR`.' })
  @IsString()
  @Matches(/^[a-z]{2,3}(-[A-Z]{2})?$/, {
    message: 'language must be a tag such as "en" or "pt-BR"',
  })
  language!: string;

  @ApiProperty({ example: 'p3', description: 'Version of the prompt: a new one is new work.' })
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,32}$/, {
    message: 'promptVersion must be 1 to 32 letters, digits, ".", "_" or "-"',
  })
  promptVersion!: string;

  /** When the client sent the request: transport, so it never enters a key. */
  @ApiPropertyOptional({
    example: '2026-01-01T10:00:00Z',
    description: 'When the client sent the request. Ignored by the key (@KeyIgnore).',
  })
  @IsOptional()
  @IsISO8601()
  @KeyIgnore()
  clientSentAt?: string;
}

export class SummaryDto {
  @ApiProperty()
  docId!: string;

  @ApiProperty()
  summary!: string;

  @ApiProperty({
    format: 'uuid',
    description: 'Made inside the handler: equal ids = one execution.',
  })
  executionId!: string;
}
