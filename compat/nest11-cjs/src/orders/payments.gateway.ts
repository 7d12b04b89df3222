import { Injectable } from '@nestjs/common';
import { randomUUID } from 'crypto';

/** Stands in for a payment provider's API: the side effect a duplicate must not repeat. */
@Injectable()
export class PaymentsGateway {
  async charge(account: string, amount: number): Promise<string> {
    return `pay_${account}_${amount}_${randomUUID()}`;
  }
}
