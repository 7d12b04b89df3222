import { HttpException } from '@nestjs/common';
import type { ProblemDetails } from '@oncely/core';

/** Problem `type` URIs of the demo's own refusals (oncely's are in `ProblemType`). */
export const DemoProblemType = {
  tenantMissing: 'urn:oncely-demo:problem:tenant-missing',
  invalidHeader: 'urn:oncely-demo:problem:invalid-header',
  cartAlreadyOrdered: 'urn:oncely-demo:problem:cart-already-ordered',
  paymentRequestUsed: 'urn:oncely-demo:problem:payment-request-used',
} as const;

/** An HTTP error the demo answers with as an RFC 9457 problem, headers included. */
export class ProblemException extends HttpException {
  constructor(
    readonly problem: ProblemDetails,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(problem, problem.status);
  }
}
