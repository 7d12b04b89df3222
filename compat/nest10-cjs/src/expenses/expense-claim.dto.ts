import { Type } from 'class-transformer';
import { IsInt, IsString, Min } from 'class-validator';

/** The form fields beside the receipt scan: multipart sends text, so the amount is converted. */
export class ExpenseClaimDto {
  @IsString()
  title: string;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  amountCents: number;
}
