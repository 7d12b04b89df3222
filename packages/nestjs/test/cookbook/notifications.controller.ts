import {
  Body,
  Controller,
  HttpCode,
  Injectable,
  Post,
  ServiceUnavailableException,
} from '@nestjs/common';
import { IdempotentKey } from '@oncely/nestjs';
import { IsIn, IsObject, IsString } from 'class-validator';
import { randomUUID } from 'node:crypto';
import type { Gate } from './support/gate.js';

export class SendNotificationDto {
  // The business event that caused the notification: "order 1001 shipped", not "a send".
  @IsString() eventId!: string;
  @IsString() receiverId!: string;
  @IsIn(['sms', 'email', 'in-app']) channel!: string;
  @IsString() template!: string;
  @IsObject() variables!: Record<string, string>;
}

export interface Sent {
  readonly messageId: string;
  readonly channel: string;
}

/** Stands in for the SMS, e-mail and in-app gateways. */
@Injectable()
export class NotificationGateway {
  readonly sent: SendNotificationDto[] = [];
  gate: Gate | undefined;
  down = false;

  async deliver(dto: SendNotificationDto): Promise<Sent> {
    await this.gate?.pass();
    if (this.down) throw new ServiceUnavailableException(`The ${dto.channel} gateway is down.`);
    this.sent.push(dto);
    return { messageId: randomUUID(), channel: dto.channel };
  }
}

@Controller('notifications')
export class NotificationsController {
  constructor(private readonly gateway: NotificationGateway) {}

  @Post()
  @HttpCode(202)
  @IdempotentKey({
    operation: 'notification-send',
    scope: 'user.tenantId',
    target: ['body.eventId', 'body.receiverId', 'body.channel'],
    input: ['body.template', 'body.variables'],
    idempotencyKey: 'ignored',
    onBusy: 'wait',
    retention: 3 * 24 * 60 * 60 * 1000,
  })
  send(@Body() dto: SendNotificationDto): Promise<Sent> {
    return this.gateway.deliver(dto);
  }
}
