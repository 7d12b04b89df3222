import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { OncelyModule } from '@oncely/nestjs';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { ExpensesModule } from './expenses/expenses.module';
import { OrdersModule } from './orders/orders.module';

@Module({
  imports: [
    // One process: oncely's in-memory coordinator and record store (its defaults).
    OncelyModule.forRoot({ namespace: 'compat-nest10' }),
    OrdersModule,
    ExpensesModule,
  ],
  providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
})
export class AppModule {}
