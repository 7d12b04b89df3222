import {
  Body,
  Controller,
  Injectable,
  Post,
  UploadedFile,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ConformanceProbe } from '@oncely/core/testing';
import { IdempotentKey } from '@oncely/nestjs';
import multer, { diskStorage } from 'multer';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import type { Observable } from 'rxjs';
import { UploadDto } from './dtos.js';

const scope = 'user.tenantId';

/** An app's own upload interceptor, running multer itself: oncely cannot recognise it. */
@Injectable()
class OwnUploadInterceptor implements NestInterceptor {
  private readonly upload = multer().single('document');

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    await promisify(this.upload)(http.getRequest(), http.getResponse());
    return next.handle();
  }
}

/** The fixture contract's upload routes (see `HttpConformanceHarness`), as the Nest docs write them. */
@Controller('uploads')
export class UploadRoutesController {
  constructor(private readonly probe: ConformanceProbe) {}

  @Post()
  @IdempotentKey({ operation: 'upload', scope })
  @UseInterceptors(FileInterceptor('document'))
  upload(@UploadedFile() file: Express.Multer.File, @Body() body: { amount?: string }) {
    return this.answer('upload', file, body.amount);
  }

  @Post('typed')
  @IdempotentKey({ operation: 'upload-typed', scope })
  @UseInterceptors(FileInterceptor('document'))
  typed(@UploadedFile() file: Express.Multer.File, @Body() body: UploadDto) {
    return this.answer('upload-typed', file, body.amount);
  }

  @Post('disk')
  @IdempotentKey({ operation: 'upload-disk', scope })
  @UseInterceptors(FileInterceptor('document', { storage: diskStorage({ destination: tmpdir() }) }))
  disk(@UploadedFile() file: Express.Multer.File, @Body() body: { amount?: string }) {
    return this.answer('upload-disk', file, body.amount);
  }

  @Post('unparsed')
  @IdempotentKey({ operation: 'upload-unparsed', scope })
  @UseInterceptors(OwnUploadInterceptor)
  unparsed(@UploadedFile() file: Express.Multer.File, @Body() body: { amount?: string }) {
    return this.answer('upload-unparsed', file, body.amount);
  }

  @Post('declared')
  @IdempotentKey({ operation: 'upload-declared', scope, keyAfterInterceptors: true })
  @UseInterceptors(OwnUploadInterceptor)
  declared(@UploadedFile() file: Express.Multer.File, @Body() body: { amount?: string }) {
    return this.answer('upload-declared', file, body.amount);
  }

  private answer(operation: string, file: Express.Multer.File, amount: string | undefined) {
    return { execution: this.probe.hit(operation), size: file.size, amount };
  }
}
