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
          migrationsRun: true, // creates oncely_idempotency_record (packages/typeorm)
        }),
    }),
    OncelyModule.forRootAsync({
      // What the routes claim: `oncely registry` reads it here, without running the factory.
      namespace: 'shop',
      service: 'shop-api',
      imports: [ConfigModule],
      inject: [ConfigService, DataSource],
      useFactory: (config: ConfigService, dataSource: DataSource) => ({
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
