import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';

export const MAX_REPORT_DAYS = 92;
const DAY_MS = 86_400_000;

/** Days from `from` to `to`, both included; `NaN` when either is not a date. */
export function reportDays(from: string, to: string): number {
  return Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1;
}

@ValidatorConstraint({ name: 'reportRange' })
class ReportRangeConstraint implements ValidatorConstraintInterface {
  validate(to: unknown, args: ValidationArguments): boolean {
    const from = (args.object as { from?: unknown }).from;
    if (typeof from !== 'string' || typeof to !== 'string') return false;
    const days = reportDays(from, to);
    return days >= 1 && days <= MAX_REPORT_DAYS;
  }

  defaultMessage(): string {
    return `to must not be before from, and the range must span at most ${MAX_REPORT_DAYS} days`;
  }
}

export class ExportReportDto {
  @ApiProperty({ example: 'sales' })
  @IsString()
  @Matches(/^[a-z][a-z0-9-]{0,63}$/, {
    message: 'reportType must be lower-case letters, digits or "-" (at most 64)',
  })
  reportType!: string;

  @ApiProperty({ example: '2026-01-01', format: 'date' })
  @IsISO8601({ strict: true })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'from must be a date such as 2026-01-01' })
  from!: string;

  @ApiProperty({ example: '2026-01-31', format: 'date' })
  @IsISO8601({ strict: true })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'to must be a date such as 2026-01-31' })
  @Validate(ReportRangeConstraint)
  to!: string;

  @ApiPropertyOptional({ example: { region: 'emea' }, type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  filters?: Record<string, unknown>;
}

export class ReportRowDto {
  @ApiProperty({ example: '2026-01-01' })
  date!: string;

  @ApiProperty({ example: 42 })
  orders!: number;

  @ApiProperty({ example: '1234.50' })
  revenue!: string;
}

export class ReportDto {
  @ApiProperty()
  reportType!: string;

  @ApiProperty()
  from!: string;

  @ApiProperty()
  to!: string;

  @ApiProperty({ type: [ReportRowDto] })
  rows!: ReportRowDto[];

  @ApiProperty({
    format: 'uuid',
    description: 'Made inside the handler: equal ids = one execution.',
  })
  executionId!: string;
}
