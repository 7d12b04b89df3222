import {
  Body,
  Controller,
  Injectable,
  Post,
  UploadedFile,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { IdempotentKey } from '@oncely/nestjs';
import { randomUUID } from 'crypto';
import { TenantGuard } from '../common/tenant.guard';
import { ExpenseClaimDto } from './expense-claim.dto';

/** What the handler reads of multer's file. */
interface ReceiptScan {
  originalname: string;
  size: number;
}

/** Where claims are filed: each call is one claim a finance team would pay out. */
@Injectable()
export class ExpenseLedger {
  filed = 0;

  file(dto: ExpenseClaimDto, scan: ReceiptScan) {
    this.filed += 1;
    return { id: randomUUID(), ...dto, receipt: scan.originalname, bytes: scan.size };
  }
}

@Controller('expenses')
@UseGuards(TenantGuard)
export class ExpensesController {
  constructor(private readonly ledger: ExpenseLedger) {}

  /**
   * An expense claim with its receipt scan, uploaded as the Nest docs show. A retry of the same
   * upload replays the claim; another scan under the same key is refused.
   */
  @Post()
  @IdempotentKey({ operation: 'expense-claim', scope: 'user.tenantId' })
  @UseInterceptors(FileInterceptor('receipt'))
  claim(@UploadedFile() scan: ReceiptScan, @Body() dto: ExpenseClaimDto) {
    return this.ledger.file(dto, scan);
  }
}
