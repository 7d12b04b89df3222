/**
 * The PostgreSQL reference: the bench handler on Nest writing one order row in its own
 * transaction (BEGIN, INSERT, COMMIT), with nothing in front of it.
 */
import 'reflect-metadata';
import { Body, Controller, Module, Post } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { acceptOrder } from './bench-handler.js';
import { createOrderTable, insertOrder, postgresConnection } from './business-row.js';
import { listen } from './listen.js';
import { serverConfigFromEnv } from './server-config.js';

const config = serverConfigFromEnv();
const source = new DataSource(postgresConnection(config.postgresSchema));
await source.initialize();
await createOrderTable(source, config.postgresSchema);

@Controller()
class BarePostgresController {
  @Post('pg-write')
  async write(@Body() body: Record<string, unknown>) {
    const order = acceptOrder(body);
    await source.transaction((manager) => insertOrder(manager, config.postgresSchema, order));
    return order;
  }
}

@Module({ controllers: [BarePostgresController] })
class BarePostgresModule {}

await listen(BarePostgresModule, config.platform);
