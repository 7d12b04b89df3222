import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload } from '@nestjs/microservices';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';
import { nextParentMessage, rabbitmqUrl, reportToParent, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { CountingServerRMQ } from './counting-rmq.server.js';
import { PAID, type FreezePoint, type PaidMessage } from './rabbitmq-consumer.constants.js';

const [namespace, keyPrefix, schema, queue, node, freeze, lease, deadLetterQueue] =
  process.argv.slice(2) as [string, string, string, string, string, FreezePoint, string, string?];
const leaseTtl = Number(lease);

/**
 * The message this process is handling: with prefetch 1 there is one at a time, and the
 * `executed` event that follows its handler is about it.
 */
let handling: PaidMessage | undefined;

/** Blocks this process's only thread: no timer, no socket write, no ack happens any more. */
function freezeHere(point: FreezePoint, message: PaidMessage): void {
  reportToParent({ frozen: point, messageId: message.messageId, node });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 * 60_000);
}

const dataSource = new DataSource(
  withIdempotencyRecords({ type: 'postgres', ...services.postgres, schema, poolSize: 5 }),
);
await dataSource.initialize();

@Controller()
class PaymentsConsumer {
  @EventPattern<string>(PAID)
  @IdempotentKey({
    namespace: 'message',
    operation: 'consume',
    scope: 'params.topic',
    target: 'body.messageId',
    idempotencyKey: 'ignored',
    onBusy: 'wait',
    // A redelivery meeting a dead consumer's record waits out its lease rather than bouncing.
    wait: leaseTtl * 5,
  })
  async paid(@Payload() message: PaidMessage) {
    handling = message;
    await dataSource.query(`INSERT INTO "${schema}"."effects" (ref, amount) VALUES ($1, $2)`, [
      message.messageId,
      message.amount,
    ]);
    reportToParent({ effect: message.messageId, node });
    if (freeze === 'after-effect' && message.freeze) freezeHere(freeze, message);
  }
}

@Module({
  imports: [
    OncelyModule.forRoot({
      namespace,
      coordinator: new RedisFlightCoordinator({ ...services.redis }, { keyPrefix }),
      store: new TypeOrmIdempotencyRecordStore(dataSource),
      defaults: { leaseTtl },
      rmq: { noAck: false },
      events: (event) => {
        if (event.mechanism !== 'idempotency') return;
        reportToParent({ outcome: event.outcome, key: event.key, node });
        // Emitted once the record is complete, before the interceptor acks.
        if (event.outcome === 'executed' && freeze === 'after-complete' && handling?.freeze) {
          freezeHere(freeze, handling);
        }
      },
    }),
  ],
  controllers: [PaymentsConsumer],
})
class ConsumerModule {}

const server = new CountingServerRMQ({
  urls: [rabbitmqUrl()],
  queue,
  // Not durable: the test deletes it; it outlives a killed consumer all the same. Refused
  // messages go to the dead-letter queue when one is named, where the parent counts them.
  queueOptions: {
    durable: false,
    ...(deadLetterQueue && {
      arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadLetterQueue },
    }),
  },
  noAck: false,
  prefetchCount: 1,
});
server.onSettlement = (settlement) => reportToParent({ settlement, node });
const app = await NestFactory.createMicroservice(ConsumerModule, {
  strategy: server,
  logger: false,
});
await app.listen();
reportToParent({ ready: node });

await nextParentMessage();
await app.close();
await dataSource.destroy();
reportToParent({ stopped: node });
// The parent keeps its end of the pipe open: stop reading so the process ends by itself.
process.stdin.destroy();
