import { IsInt, IsString, Max, Min } from 'class-validator';

export class CreateOrderDto {
  @IsString() cartId!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}
