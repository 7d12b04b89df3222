/** The ceiling: the bench handler on Nest with nothing in front of it. */
import 'reflect-metadata';
import { Body, Controller, Module, Post } from '@nestjs/common';
import { acceptOrder } from './bench-handler.js';
import { listen } from './listen.js';
import { serverConfigFromEnv } from './server-config.js';

@Controller()
class BareController {
  @Post('bare')
  bare(@Body() body: Record<string, unknown>) {
    return acceptOrder(body);
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

await listen(BareModule, serverConfigFromEnv().platform);
