import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** RFC 9457 problem details, as every error of the demo is sent (for the OpenAPI document). */
export class ProblemDetailsDto {
  @ApiProperty({ example: 'urn:oncely:problem:payload-mismatch' })
  type!: string;

  @ApiProperty({ example: 'Idempotency key reused with a different payload' })
  title!: string;

  @ApiProperty({ example: 422 })
  status!: number;

  @ApiProperty({ description: 'What went wrong and how to fix it.' })
  detail!: string;

  @ApiPropertyOptional({ description: 'Header concerned (idempotency key problems).' })
  header?: string;

  @ApiPropertyOptional({ description: 'Key field concerned (missing or invalid key input).' })
  field?: string;

  @ApiPropertyOptional({
    description: 'Invalid body properties with their messages.',
    example: [{ property: 'items.0.qty', messages: ['qty must not be less than 1'] }],
  })
  errors?: { property: string; messages: string[] }[];
}
