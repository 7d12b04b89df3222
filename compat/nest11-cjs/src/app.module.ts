import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OncelyModule } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { OrdersModule } from './orders/orders.module';

@Module({
  imports: [
    // DATABASE_URL and REDIS_URL, from the environment or a .env file.
    ConfigModule.forRoot(),
    TypeOrmModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) =>
        withIdempotencyRecords({
          type: 'postgres',
          url: config.getOrThrow<string>('DATABASE_URL'),
          autoLoadEntities: true,
          // Creates oncely_idempotency_record on first start; oncely refuses to boot without it.
          migrationsRun: true,
        }),
    }),
    OncelyModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService, DataSource],
      useFactory: (config: ConfigService, dataSource: DataSource) => ({
        namespace: 'compat-nest11',
        // Built from a URL, so oncely owns the client and closes it on shutdown.
        coordinator: new RedisFlightCoordinator(config.getOrThrow<string>('REDIS_URL')),
        // The DataSource stays TypeOrmModule's: oncely never destroys it.
        store: new TypeOrmIdempotencyRecordStore(dataSource, {
          purge: { every: 60_000, batch: 500 },
        }),
      }),
    }),
    OrdersModule,
  ],
})
export class AppModule {}
