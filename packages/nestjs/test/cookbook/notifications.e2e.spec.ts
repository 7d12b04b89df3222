import { startCookbookApp, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import {
  NotificationGateway,
  NotificationsController,
  type SendNotificationDto,
} from './notifications.controller.js';

describe('cookbook: notification sending (event, receiver and channel)', () => {
  let shop: CookbookApp;
  let gateway: NotificationGateway;

  beforeAll(async () => {
    shop = await startCookbookApp({
      controllers: [NotificationsController],
      providers: [NotificationGateway],
    });
    gateway = shop.get(NotificationGateway);
  });

  afterAll(() => shop.close());

  const notice = (eventId: string, changes: Partial<SendNotificationDto> = {}) => ({
    eventId,
    receiverId: 'user-1001',
    channel: 'sms',
    template: 'order-shipped',
    variables: { orderId: 'order-1001' },
    ...changes,
  });
  const send = (body: object) => shop.post('/notifications', body);
  const sent = (eventId: string) => gateway.sent.filter((dto) => dto.eventId === eventId);

  it('sends a redelivered event once and answers it with the first send', async () => {
    const first = await send(notice('evt-redelivered'));
    const again = await send(notice('evt-redelivered'));
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(sent('evt-redelivered')).toHaveLength(1);
    expect(shop.keys('shop:notification-send:v1', 'executed')).toContain(
      'shop:notification-send:v1:acme:evt-redelivered,user-1001,sms',
    );
  });

  it('sends concurrent duplicates once; each waits for that send', async () => {
    gateway.gate = new Gate();
    const first = send(notice('evt-busy')).then((response) => response);
    await gateway.gate.entered;
    const duplicates = [1, 2, 3].map(() => send(notice('evt-busy')).then((r) => r));
    gateway.gate.open();
    gateway.gate = undefined;
    const responses = await Promise.all([first, ...duplicates]);
    for (const response of responses) expect(response.body).toEqual(responses[0].body);
    expect(sent('evt-busy')).toHaveLength(1);
  });

  it('refuses the same event, receiver and channel with another text (422)', async () => {
    await send(notice('evt-text', { variables: { orderId: 'order-1001' } }));
    const changed = await send(notice('evt-text', { variables: { orderId: 'order-2002' } }));
    expect(changed.status).toBe(422);
    expect(sent('evt-text')).toHaveLength(1);
  });

  it('keeps nothing of a gateway failure: the redelivery sends', async () => {
    gateway.down = true;
    const failed = await send(notice('evt-down'));
    gateway.down = false;
    const redelivered = await send(notice('evt-down'));
    expect(failed.status).toBe(503);
    expect(redelivered.status).toBe(202);
    expect(redelivered.headers['idempotent-replayed']).toBeUndefined();
    expect(sent('evt-down')).toHaveLength(1);
  });

  describe('reverse tests: alike, yet different notifications', () => {
    it('sends one event to the same receiver on two channels', async () => {
      await send(notice('evt-channels', { channel: 'sms' }));
      await send(notice('evt-channels', { channel: 'email' }));
      expect(sent('evt-channels').map((dto) => dto.channel)).toEqual(['sms', 'email']);
    });

    it('sends one event to two receivers', async () => {
      await send(notice('evt-receivers', { receiverId: 'user-1001' }));
      await send(notice('evt-receivers', { receiverId: 'user-2002' }));
      expect(sent('evt-receivers')).toHaveLength(2);
    });

    it('sends the same text again for a new event (the user asked twice)', async () => {
      await send(notice('evt-monday', { template: 'password-reset', variables: {} }));
      await send(notice('evt-tuesday', { template: 'password-reset', variables: {} }));
      expect(sent('evt-monday')).toHaveLength(1);
      expect(sent('evt-tuesday')).toHaveLength(1);
    });
  });
});
