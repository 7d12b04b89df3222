import {
  Body,
  Controller,
  HttpCode,
  Injectable,
  Post,
  UnprocessableEntityException,
} from '@nestjs/common';
import type { KeyContext } from '@oncely/core';
import { SingleFlight } from '@oncely/nestjs';
import { IsIn, IsInt, IsString, IsUrl, Max, Min } from 'class-validator';
import { randomUUID } from 'node:crypto';
import type { Gate } from './support/gate.js';

export class ConvertFileDto {
  @IsString() fileId!: string;
  // The object store's version of the file (ETag or VersionId): it changes with the content.
  @IsString() etag!: string;
  // Signed and short-lived: it changes on every request, so it is no part of the key.
  @IsUrl({ require_tld: false }) downloadUrl!: string;
  @IsIn(['webp', 'png', 'avif']) format!: string;
  @IsInt() @Min(1) @Max(100) quality!: number;
}

/** The file as content: its id at one version, never the address it is fetched from. */
export function fileVersion(ctx: KeyContext): string {
  const { fileId, etag } = ctx.body as ConvertFileDto;
  return `${fileId}@${etag}`;
}

export interface Converted {
  readonly fileId: string;
  readonly format: string;
  readonly outputId: string;
}

/** Stands in for the converter: slow, CPU-bound, and unable to read a corrupt file. */
@Injectable()
export class FileConverter {
  readonly runs: ConvertFileDto[] = [];
  gate: Gate | undefined;

  async convert(dto: ConvertFileDto): Promise<Converted> {
    this.runs.push(dto);
    await this.gate?.pass();
    if (dto.etag === 'corrupt') {
      throw new UnprocessableEntityException(`${dto.fileId} is not a readable image.`);
    }
    return { fileId: dto.fileId, format: dto.format, outputId: randomUUID() };
  }
}

@Controller('files')
export class FileConversionsController {
  constructor(private readonly converter: FileConverter) {}

  @Post('conversions')
  @HttpCode(200)
  @SingleFlight({
    operation: 'file-convert',
    scope: 'user.tenantId',
    target: fileVersion,
    input: ['body.format', 'body.quality'],
    // One version of a file converts to one output: keep it for an hour.
    resultTtl: 60 * 60 * 1000,
    // A conversion takes up to 20 s; a duplicate waits for it rather than getting 409.
    wait: 25_000,
    errorTtl: 3_000,
  })
  convert(@Body() dto: ConvertFileDto): Promise<Converted> {
    return this.converter.convert(dto);
  }
}
