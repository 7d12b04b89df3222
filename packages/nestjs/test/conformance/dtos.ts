import { Type } from 'class-transformer';
import { KeyIgnore } from '@oncely/nestjs';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Min,
  ValidateNested,
} from 'class-validator';

export class OrderLineDto {
  @IsString()
  @IsNotEmpty()
  sku!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

export class CreateOrderDto {
  @IsString()
  @IsNotEmpty()
  customer!: string;

  @ValidateNested({ each: true })
  @Type(() => OrderLineDto)
  lines!: OrderLineDto[];

  @IsOptional()
  @IsString()
  @KeyIgnore()
  clientSentAt?: string;
}

export class CreateUserDto {
  @IsString()
  name!: string;
}

export class PayDto {
  @IsString()
  @Matches(/^[A-Za-z0-9-]{1,64}$/)
  orderId!: string;

  @IsString()
  @Matches(/^\d{1,9}\.\d{2}$/)
  amount!: string;
}

export class UploadDto {
  @IsString()
  @Matches(/^\d{1,9}\.\d{2}$/)
  amount!: string;
}
