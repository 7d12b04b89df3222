import { Body, Controller, Post } from '@nestjs/common';
import { IdempotentKey, type OncelyModuleOptions } from '@oncely/nestjs';
import { OncelyRuntime } from '../../src/oncely.runtime.js';
import { IsString } from 'class-validator';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestApp, Executions, PLATFORMS, uniqueNamespace } from '../fixtures/test-app.js';

class NoteDto {
  @IsString() text!: string;
}

@Controller('notes')
class NotesController {
  constructor(private readonly executions: Executions) {}

  @Post()
  @IdempotentKey({ operation: 'note-create', scope: 'user.tenantId' })
  create(@Body() dto: NoteDto) {
    return { id: randomUUID(), text: dto.text, run: this.executions.hit('note-create') };
  }
}

/** An app whose principal is not `request.user`: a tenant header mapped by the option. */
const fromTenantHeader: OncelyModuleOptions['keyContext'] = (_context, base) => ({
  ...base,
  user: { tenantId: (base.headers as Record<string, string>)['x-tenant-id'] },
});

describe.each(PLATFORMS)('the keyContext option on %s', (platform) => {
  it('builds keys from the context it returns, with the validated body kept', async () => {
    const app = await createTestApp(
      platform,
      { namespace: uniqueNamespace('ctx'), keyContext: fromTenantHeader },
      [NotesController],
    );
    try {
      const send = (tenant: string, key: string, text = 'hi') =>
        request(app.getHttpServer())
          .post('/notes')
          .set('x-tenant-id', tenant)
          .set('idempotency-key', key)
          .send({ text });
      const key = randomUUID();
      const first = await send('acme', key);
      expect(first.status).toBe(201);
      const replay = await send('acme', key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      const otherTenant = await send('globex', key);
      expect(otherTenant.status).toBe(201);
      expect(otherTenant.body.id).not.toBe(first.body.id);
      const mismatch = await send('acme', key, 'changed');
      expect(mismatch.status).toBe(422);
      const missing = await request(app.getHttpServer())
        .post('/notes')
        .set('idempotency-key', randomUUID())
        .send({ text: 'x' });
      expect(missing.status).toBe(400);
      expect(app.get(Executions).of('note-create')).toBe(2);
    } finally {
      await app.close();
    }
  });
});

describe('the keyContext option at start-up', () => {
  it('refuses a keyContext that is not a function, naming the option', async () => {
    expect(() =>
      OncelyRuntime.create({
        namespace: 'ctx',
        keyContext: 'user.tenantId' as unknown as OncelyModuleOptions['keyContext'],
      }),
    ).toThrow('OncelyModule option "keyContext" must be a function (context, base) => KeyContext');
  });
});
