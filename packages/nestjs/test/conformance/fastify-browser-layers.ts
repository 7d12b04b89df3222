import fastifyCookie from '@fastify/cookie';
import fastifyHelmet from '@fastify/helmet';
import fastifySession from '@fastify/session';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CONFORMANCE_SESSION_COOKIE } from '@oncely/core/testing';
import {
  CONFORMANCE_SESSION_SECRET,
  requestId,
} from '../../../express/test/conformance/browser-layers.js';

/**
 * The browser layers on Nest's Fastify platform, the way the NestJS docs register them (CORS is
 * `app.enableCors`): `@fastify/helmet`, `@fastify/session` (its cookie set in `onSend`), and the
 * request id from an `onRequest` hook. Fastify hands all of them to the Node response only when
 * it writes its headers.
 */
export async function registerFastifyBrowserLayers(app: NestFastifyApplication): Promise<void> {
  await app.register(fastifyHelmet);
  await app.register(fastifyCookie);
  await app.register(fastifySession, {
    cookieName: CONFORMANCE_SESSION_COOKIE,
    secret: CONFORMANCE_SESSION_SECRET,
    saveUninitialized: true,
    cookie: { secure: false },
  });
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', requestId(request.headers['x-request-id']));
    });
}
