import { Exclude } from 'class-transformer';

/** An order as the service returns it; `ClassSerializerInterceptor` drops what is excluded. */
export class Order {
  id: string;
  cartId: string;
  quantity: number;

  @Exclude()
  paymentReference: string;

  constructor(fields: Order) {
    Object.assign(this, fields);
  }
}
