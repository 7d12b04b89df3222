import { HttpException } from '@nestjs/common';
import type { HttpResponse } from '@oncely/core/adapter';

/**
 * A complete response oncely answers with instead of the handler: a problem+json error, or a
 * replay whose status differs from the route's own. Written by `OncelyExceptionFilter`; an app
 * filter catching it first still sees a regular `HttpException` with the right status.
 */
export class OncelyResponseException extends HttpException {
  constructor(
    /** The response to write as is: status, headers and body. */
    readonly oncelyResponse: HttpResponse,
  ) {
    super(
      oncelyResponse.body.kind === 'json' ? (oncelyResponse.body.value as object) : '',
      oncelyResponse.status,
    );
  }
}
