import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { OncelyResponseException } from './oncely-response.exception.js';

/**
 * The one place oncely's own responses are written (problem+json errors, replays with their own
 * status), with their headers, on Express and Fastify alike.
 */
@Catch(OncelyResponseException)
export class OncelyExceptionFilter implements ExceptionFilter<OncelyResponseException> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: OncelyResponseException, host: ArgumentsHost): void {
    const adapter = this.adapterHost.httpAdapter;
    const response: unknown = host.switchToHttp().getResponse();
    if (adapter.isHeadersSent(response)) {
      adapter.end(response);
      return;
    }
    const { status, headers, body } = exception.oncelyResponse;
    for (const [name, value] of Object.entries(headers)) adapter.setHeader(response, name, value);
    switch (body.kind) {
      case 'json':
        // Handed as text, sent as it is with the Content-Type set above on every Nest major and
        // platform. Handed an object with an error status, Nest 11's Express adapter replaces
        // any Content-Type but `application/json…` (problem+json too) and warns, per response.
        adapter.reply(response, JSON.stringify(body.value), status);
        return;
      case 'empty':
        adapter.reply(response, undefined, status);
        return;
      case 'bytes':
        // Both platforms send a Buffer as raw bytes through their own `send`.
        adapter.status(response, status);
        (response as { send(payload: Buffer): unknown }).send(Buffer.from(body.value));
    }
  }
}
