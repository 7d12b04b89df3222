/**
 * The ceiling: the bench handler on Nest with nothing in front of it; and the same handler
 * behind an interceptor that does nothing, which is what Nest charges any interceptor.
 */
import 'reflect-metadata';
import {
  Body,
  Controller,
  Module,
  Post,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { acceptOrder } from './bench-handler.js';
import { listen } from './listen.js';
import { serverConfigFromEnv } from './server-config.js';

class PassThroughInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle();
  }
}

@Controller()
class BareController {
  @Post('bare')
  bare(@Body() body: Record<string, unknown>) {
    return acceptOrder(body);
  }

  @Post('bare-intercepted')
  @UseInterceptors(PassThroughInterceptor)
  intercepted(@Body() body: Record<string, unknown>) {
    return acceptOrder(body);
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

await listen(BareModule, serverConfigFromEnv().platform);
