import { Module } from '@nestjs/common';
import { ExpenseLedger, ExpensesController } from './expenses.controller';

@Module({
  controllers: [ExpensesController],
  providers: [ExpenseLedger],
})
export class ExpensesModule {}
