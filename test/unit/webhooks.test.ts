import type { OrderRecord } from '@pos/shared/domain/records';
import { retryDelay } from '@pos/shared/queue/webhook-queue';
import { eventIdOf } from '@pos/shared/events/outbox';
import { webhookIdOf } from '@pos/shared/webhooks/fan-out';
import { WEBHOOK_EVENT_TYPES, webhooksOf } from '@pos/shared/webhooks/event-types';
import { newWebhookSecret, SecretBox } from '@pos/shared/webhooks/secrets';
import { isForbiddenAddress, isPlatformAddress } from '@pos/shared/webhooks/url-guard';

const record = (state: OrderRecord['state']): OrderRecord =>
  ({ number: 7, state, rows: [], guestCount: 1 }) as unknown as OrderRecord;
const order = (state: OrderRecord['state'], failureCount = 0, version = 1) => ({
  type: 'order' as const,
  record: record(state),
  failureCount,
  version,
});
const types = (event: Parameters<typeof webhooksOf>[0]) =>
  webhooksOf(event)
    .map((w) => w.type)
    .sort();

describe('the webhook mapping table', () => {
  it('maps each order transition to its types', () => {
    expect(types(order('PLACED'))).toEqual(['order.placed']);
    expect(types(order('PLACED', 1))).toEqual(['order.failed', 'order.placed']);
    expect(types(order('FAILED', 3))).toEqual(['order.failed']);
    expect(types(order('COMPLETED'))).toEqual(['order.completed']);
    expect(types(order('ABORTED'))).toEqual(['order.aborted']);
    expect(types(order('SELECTING'))).toEqual([]);
    expect(types(order('NEW'))).toEqual([]);
    expect(types({ type: 'session-closed', sessionId: 's' })).toEqual([]);
    expect(types({ type: 'command', record: { number: 3, state: 'PLACED' } as never })).toEqual(['command.created']);
    expect(types({ type: 'command-acknowledged', record: { number: 3, state: 'PLACED' } as never })).toEqual([
      'command.acknowledged',
    ]);
    expect(WEBHOOK_EVENT_TYPES).toEqual([
      'order.placed',
      'order.completed',
      'order.aborted',
      'order.failed',
      'command.created',
      'command.acknowledged',
      'order.overdue',
      'location.online',
      'location.offline',
      'location.paused',
      'location.resumed',
      'menu.published',
      'menu.item_availability_changed',
    ]);
  });

  it('maps the overdue announcement to order.overdue alone, once per placement, and location changes to their types', () => {
    const placed = {
      type: 'order',
      record: { number: 7, state: 'PLACED', orderTime: '2026-01-01T10:00:00.000Z' },
      version: 1,
    } as const;
    const announced = webhooksOf({ ...placed, overdue: true, operatorOnly: true } as never);
    expect(announced.map((w) => w.type)).toEqual(['order.overdue']);
    // A later state change of an overdue order is that change, not another overdue.
    expect(types({ ...placed, record: { ...placed.record, state: 'COMPLETED' }, overdue: true } as never)).toEqual([
      'order.completed',
    ]);
    const again = webhooksOf({ ...placed, version: 2, overdue: true, operatorOnly: true } as never);
    expect(again[0]!.eventKey).toBe(announced[0]!.eventKey);
    const replaced = webhooksOf({
      ...placed,
      record: { ...placed.record, orderTime: '2026-01-01T11:00:00.000Z' },
      overdue: true,
      operatorOnly: true,
    } as never);
    expect(replaced[0]!.eventKey).not.toBe(announced[0]!.eventKey);
    const location = { id: 'l1', name: 'x', online: true, since: '2026-01-01T10:00:00.000Z', paused: false };
    expect(types({ type: 'location', location, change: 'online', at: 1 } as never)).toEqual(['location.online']);
    expect(types({ type: 'location', location, change: 'paused', at: 1 } as never)).toEqual(['location.paused']);
  });

  it('gives an event the same key whenever it is published again, and another version another key', () => {
    const [first] = webhooksOf(order('COMPLETED', 0, 4));
    const [again] = webhooksOf(order('COMPLETED', 0, 4));
    const [later] = webhooksOf(order('COMPLETED', 0, 5));
    expect(again!.eventKey).toBe(first!.eventKey);
    expect(later!.eventKey).not.toBe(first!.eventKey);
    expect(first!.data).toMatchObject({ order: { number: 7, version: 4, failureCount: 0 } });
    // the event's id, and each subscription's webhook-id of it, derived again the same
    const id = eventIdOf('loc', first!.eventKey);
    expect(eventIdOf('loc', again!.eventKey)).toBe(id);
    expect(eventIdOf('loc', later!.eventKey)).not.toBe(id);
    expect(eventIdOf('other-loc', first!.eventKey)).not.toBe(id);
    expect(id).toMatch(/^evt_[A-Za-z0-9_-]{24}$/);
    expect(webhookIdOf(id, 'sub')).toBe(webhookIdOf(id, 'sub'));
    expect(webhookIdOf(id, 'sub')).not.toBe(webhookIdOf(id, 'other'));
    expect(webhookIdOf(id, 'sub')).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
  });
});

describe('webhook endpoint addresses', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.8',
    '172.20.1.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '168.63.129.16',
  ])('refuses %s', (address) => expect(isForbiddenAddress(address)).toBe(true));
  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '172.32.0.1'])('allows %s', (address) =>
    expect(isForbiddenAddress(address)).toBe(false),
  );

  // IPv6 forms that carry an IPv4 address are judged by it: a metadata or loopback address inside is refused.
  it.each([
    ['64:ff9b::a9fe:a9fe', 'NAT64 of 169.254.169.254'],
    ['64:ff9b:1::808:808', "NAT64's local-use prefix, not globally reachable"],
    ['2002:a9fe:a9fe::', '6to4 of 169.254.169.254'],
    ['::127.0.0.1', 'IPv4-compatible 127.0.0.1'],
    ['::a00:1', 'IPv4-compatible 10.0.0.1'],
    ['::ffff:0:7f00:1', 'IPv4-translated 127.0.0.1'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped, hexadecimal'],
    ['2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7', 'Teredo, server 169.254.169.254'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1'],
    ['2001:db8::1', 'documentation'],
    ['not an address', 'no address at all'],
  ])('refuses %s (%s)', (address) => expect(isForbiddenAddress(address)).toBe(true));
  it.each([
    ['64:ff9b::808:808', 'NAT64 of 8.8.8.8'],
    ['2002:808:808::1', '6to4 of 8.8.8.8'],
    ['::ffff:8.8.8.8', 'IPv4-mapped 8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo, server 65.54.227.120, client 8.8.8.8'],
  ])('allows %s (%s)', (address) => expect(isForbiddenAddress(address)).toBe(false));
});

describe('cloud metadata and platform addresses (refused whatever WEBHOOK_ALLOW_PRIVATE says)', () => {
  it.each([
    '169.254.169.254',
    '169.254.170.2',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    'fd00:ec2::254',
    'fd00:ec2::23',
    '168.63.129.16',
    '100.100.100.200',
    '2002:a9fe:a9fe::',
  ])('names %s one', (address) =>
    expect([isPlatformAddress(address), isForbiddenAddress(address)]).toEqual([true, true]),
  );
  it.each(['127.0.0.1', '10.0.0.5', '192.168.1.20', 'fd00::1', '::1', '93.184.215.14'])(
    'does not name %s one',
    (address) => expect(isPlatformAddress(address)).toBe(false),
  );
});

describe('webhook secrets', () => {
  it('are whsec_ and base64 of 32 bytes, sealed so that the stored text does not show them', () => {
    const secret = newWebhookSecret();
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const box = new SecretBox('s'.repeat(32));
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    expect(() => new SecretBox('t'.repeat(32)).open(sealed)).toThrow();
  });
});

describe('the retry schedule', () => {
  it('waits each step of WEBHOOK_RETRY_SCHEDULE before the next attempt', () => {
    const schedule = [5_000, 300_000, 1_800_000];
    expect([1, 2, 3].map((attemptsMade) => retryDelay(schedule, attemptsMade))).toEqual(schedule);
  });
});
