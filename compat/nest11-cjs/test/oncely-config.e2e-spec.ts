import { ConfigModule } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { ONCELY_MODULE_OPTIONS, OncelyModule } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';
import { OncelyConfig } from '../src/oncely.config';

process.env.REDIS_URL = 'redis://127.0.0.1:6379';

it('OncelyConfig, the README class, gives forRootAsync the factory part of the options', async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(),
      OncelyModule.forRootAsync({
        namespace: 'shop',
        service: 'shop-api',
        imports: [ConfigModule],
        useClass: OncelyConfig,
      }),
    ],
  }).compile();
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  try {
    expect(moduleRef.get(ONCELY_MODULE_OPTIONS)).toEqual({
      coordinator: expect.any(RedisFlightCoordinator),
    });
  } finally {
    await app.close();
  }
});
