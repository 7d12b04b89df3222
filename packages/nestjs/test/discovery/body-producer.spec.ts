import { Controller, Injectable, Post, UseInterceptors, type Type } from '@nestjs/common';
import { FileInterceptor, NoFilesInterceptor } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { OncelyConfigurationError, RouteOptionsError } from '@oncely/core';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import { ProtectedHandlerDiscovery } from '../../src/discovery/protected-handler.discovery.js';
import { uniqueNamespace } from '../fixtures/test-app.js';

@Controller('uploads')
@UseInterceptors(NoFilesInterceptor())
class FormsController {
  @Post('form')
  @IdempotentKey({ operation: 'form', idempotencyKey: 'ignored' })
  form() {
    return {};
  }
}

@Controller('documents')
class DocumentsController {
  @Post()
  @IdempotentKey({ operation: 'document', idempotencyKey: 'ignored' })
  @UseInterceptors(FileInterceptor('document'))
  upload() {
    return {};
  }

  @Post('plain')
  @IdempotentKey({ operation: 'plain', idempotencyKey: 'ignored' })
  plain() {
    return {};
  }
}

@Controller('late')
class WrongOrderController {
  @Post()
  @UseInterceptors(FileInterceptor('document'))
  @IdempotentKey({ operation: 'late', idempotencyKey: 'ignored' })
  upload() {
    return {};
  }
}

@Injectable()
class ImportJob {
  @IdempotentKey({
    operation: 'import',
    idempotencyKey: 'ignored',
    target: 'args.0',
    keyAfterInterceptors: true,
  })
  run(id: string) {
    return id;
  }
}

async function boot(controllers: Type[], providers: Type[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('upload') })],
    controllers,
    providers,
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('routes whose body their own interceptors produce', () => {
  it("recognises multer's interceptors on the route and on its controller; other routes key at once", async () => {
    const moduleRef = await boot([FormsController, DocumentsController]);
    const discovery = moduleRef.get(ProtectedHandlerDiscovery);
    const waits = (handler: object) => discovery.httpRoute(handler)?.keyAfterInterceptors;

    expect(waits(FormsController.prototype.form)).toBe(true);
    expect(waits(DocumentsController.prototype.upload)).toBe(true);
    expect(waits(DocumentsController.prototype.plain)).toBe(false);
    await moduleRef.close();
  });

  it('refuses to boot when the upload interceptor would run after oncely, naming the route and the fix', async () => {
    const failure = boot([WrongOrderController]);

    await expect(failure).rejects.toThrow(OncelyConfigurationError);
    await expect(failure).rejects.toThrow(
      /^WrongOrderController\.upload \(POST \/late\) builds its keys from a body its own interceptors produce, but an interceptor on the route runs after oncely's: write @IdempotentKey\(\)\/@SingleFlight\(\) above @UseInterceptors\(\.\.\.\)/,
    );
  });

  it('refuses keyAfterInterceptors on a provider method, which has no route interceptors', async () => {
    await expect(boot([], [ImportJob])).rejects.toThrow(
      /^ImportJob\.run \(provider method\) sets keyAfterInterceptors, which only HTTP routes take/,
    );
  });

  it('checks keyAfterInterceptors where the decorator is applied, naming the route', () => {
    const apply = () =>
      IdempotentKey({
        operation: 'bad',
        keyAfterInterceptors: 'yes' as unknown as boolean,
      })(DocumentsController.prototype, 'plain', {
        value: DocumentsController.prototype.plain,
      });

    expect(apply).toThrow(RouteOptionsError);
    expect(apply).toThrow(
      'Invalid oncely option "keyAfterInterceptors" on DocumentsController.plain: must be true or false.',
    );
  });
});
