import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

export class OrderItemDto {
  @ApiProperty({ example: 'sku-1' })
  @IsString()
  @Length(1, 64)
  sku!: string;

  @ApiProperty({ example: 2, minimum: 1 })
  @IsInt()
  @Min(1)
  @Max(10_000)
  qty!: number;
}

export class CreateOrderDto {
  @ApiProperty({ example: 'cart-77' })
  @IsString()
  @Length(1, 128)
  cartId!: string;

  @ApiProperty({ type: [OrderItemDto], minItems: 1 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => OrderItemDto)
  items!: OrderItemDto[];

  @ApiPropertyOptional({ example: 'leave at the door' })
  @IsOptional()
  @IsString()
  @Length(0, 500)
  note?: string;
}

export class OrderDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  cartId!: string;

  @ApiProperty({ type: [OrderItemDto] })
  items!: OrderItemDto[];

  @ApiPropertyOptional()
  note?: string;

  @ApiProperty({
    format: 'uuid',
    description: 'Made inside the handler: equal ids = one execution.',
  })
  executionId!: string;
}
