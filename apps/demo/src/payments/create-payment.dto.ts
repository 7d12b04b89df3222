import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';

export class CreatePaymentDto {
  @ApiProperty({
    example: 'PR-2026-0001',
    description: "The caller's number for this payment request: the payment's identity.",
  })
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, {
    message: 'paymentRequestNo must be 1 to 64 letters, digits, ".", "_" or "-"',
  })
  paymentRequestNo!: string;

  @ApiProperty({ example: 'order-1001' })
  @IsString()
  @Length(1, 128)
  orderId!: string;

  @ApiProperty({
    example: '100.00',
    description: 'Decimal string with two decimals; hashed exactly as sent.',
  })
  @IsString()
  @Matches(/^(0|[1-9]\d{0,11})\.\d{2}$/, {
    message: 'amount must be a decimal string with two decimals, such as "100.00"',
  })
  amount!: string;

  @ApiProperty({ example: 'EUR', description: 'ISO 4217 code, upper case.' })
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be a 3-letter upper-case code, such as "EUR"' })
  currency!: string;
}

export class PaymentDto {
  @ApiProperty({ format: 'uuid' })
  paymentId!: string;

  @ApiProperty({ example: 'succeeded' })
  status!: string;

  @ApiProperty({ example: '100.00' })
  amount!: string;

  @ApiProperty({ example: 'EUR' })
  currency!: string;

  @ApiProperty({
    format: 'uuid',
    description: 'Made inside the handler: equal ids = one execution.',
  })
  executionId!: string;
}
