import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE } from '@oncely/core';
import { ProblemDetailsDto } from './problem-details.dto.js';

/** One problem a route may answer with: its `type` URI and when it happens. */
export interface DocumentedProblem {
  readonly status: number;
  readonly type: string;
  readonly when: string;
}

/**
 * Documents a route's problem+json responses in the OpenAPI document, one entry per status
 * listing every `type` it may carry (OpenAPI allows one response per status).
 */
export function ApiProblemResponses(...problems: readonly DocumentedProblem[]): MethodDecorator {
  const byStatus = new Map<number, DocumentedProblem[]>();
  for (const problem of problems) {
    byStatus.set(problem.status, [...(byStatus.get(problem.status) ?? []), problem]);
  }
  const responses = [...byStatus].map(([status, cases]) =>
    ApiResponse({
      status,
      description: cases.map((c) => `\`${c.type}\`: ${c.when}`).join('<br>'),
      content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemDetailsDto) } } },
      ...(status === 409 || status === 503
        ? {
            headers: {
              'Retry-After': {
                description: 'Whole seconds after which a retry can get the outcome.',
                schema: { type: 'integer' },
              },
            },
          }
        : {}),
    }),
  );
  return applyDecorators(ApiExtraModels(ProblemDetailsDto), ...responses);
}
