// `record-table`: the record table was never migrated (found while Nest creates the app).
// `foreign-claim`: another service already claims the route's operation (found at bootstrap).
import { Controller, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InMemoryClaimRegistry, createOncelyEngine } from '@oncely/core';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { DataSource } from 'typeorm';

const failure = process.argv[3] as 'record-table' | 'foreign-claim';

@Controller('payments')
class PaymentsController {
  @Post()
  @IdempotentKey({ operation: 'payment-capture', scope: 'user.tenantId' })
  capture() {
    return {};
  }
}

const registry = new InMemoryClaimRegistry();
const orders = createOncelyEngine({
  namespace: 'shop',
  service: 'orders-api',
  claims: { registry },
  logger: false,
});
orders.defineRoute('OrdersController.capture', {
  idempotent: { operation: 'payment-capture', scope: 'user.tenantId' },
});
await orders.registerClaims();

const store =
  failure === 'record-table'
    ? new TypeOrmIdempotencyRecordStore(
        await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize(),
      )
    : undefined;

@Module({
  imports: [
    OncelyModule.forRoot({
      namespace: 'shop',
      service: 'billing-api',
      claims: { registry },
      ...(store && { store }),
    }),
  ],
  controllers: [PaymentsController],
})
class AppModule {}

const app = await NestFactory.create(AppModule);
await app.listen(0);
console.log('listening');
