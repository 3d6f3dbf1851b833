import { randomBytes, randomUUID } from 'node:crypto';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { Logger } from '@pos/shared/log';
import type { DeliveryJobData } from '@pos/shared/queue/webhook-queue';
import type { RedisClient } from '@pos/shared/redis';
import type { WebhookInput, WebhookUpdateInput } from '@pos/shared/schemas/requests';
import type { QueuedDelivery } from '@pos/shared/schemas/responses';
import type { WebhookDeliveryDoc, WebhookDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import type { Page } from '@pos/shared/store/page';
import type { WebhookDeliveriesRepo, WebhooksRepo } from '@pos/shared/store/webhooks';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import { subscriptionsChanged, unlocatedBody } from '@pos/shared/webhooks/fan-out';
import { TEST_EVENT_TYPE } from '@pos/shared/webhooks/event-types';
import { newWebhookSecret, type SecretBox } from '@pos/shared/webhooks/secrets';
import { checkWebhookUrl, UrlRefused } from '@pos/shared/webhooks/url-guard';

export const SUBSCRIPTION_NOT_FOUND = 'Webhook subscription does not exist';

export interface WebhooksDeps {
  webhooks: Pick<WebhooksRepo, 'create' | 'find' | 'list' | 'update' | 'remove' | 'rotate'>;
  deliveryLog: Pick<WebhookDeliveriesRepo, 'list' | 'find'>;
  deliveries: Pick<DeliveryQueue, 'add'>;
  /** Seals secrets under WEBHOOK_SECRET_KEY (else API_KEY_SECRET). */
  secrets: SecretBox;
  redis: RedisClient;
  prefix: string;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** KEY_ROTATION_GRACE: how long a rotated-out secret still signs. */
  rotationGraceMs: number;
}

/**
 * Webhook subscriptions (docs/webhooks.md): created, listed, changed, removed, their secret
 * rotated, a test event sent, the delivery log read, a delivery sent again. Every change of the set
 * of subscriptions tells the fan-out's caches (subscriptionsChanged).
 */
export class Webhooks {
  constructor(private readonly deps: WebhooksDeps) {}

  /** The SSRF guard at creation and change: a refused URL is a 400 saying why. */
  async checkUrl(url: string): Promise<void> {
    try {
      await checkWebhookUrl(url, this.deps.allowPrivate);
    } catch (err) {
      if (err instanceof UrlRefused) throw new ProblemError(problems.validation(err.message));
      throw err;
    }
  }

  /** A new subscription, and its secret, which the answer shows this once. */
  async create(input: WebhookInput, log: Logger): Promise<{ doc: WebhookDoc; secret: string }> {
    const now = new Date();
    const secret = newWebhookSecret();
    const doc: WebhookDoc = {
      _id: newId(),
      url: input.url,
      events: input.events,
      secret: this.deps.secrets.seal(secret),
      createdAt: now,
      updatedAt: now,
    };
    if (input.locationIds) doc.locationIds = input.locationIds;
    if (input.description !== undefined) doc.description = input.description;
    await this.deps.webhooks.create(doc);
    await this.changed();
    log.info({ subscriptionId: doc._id, events: doc.events }, 'webhook subscription created');
    return { doc, secret };
  }

  find(id: string): Promise<WebhookDoc | null> {
    return this.deps.webhooks.find(id);
  }

  list(page: Page<string>, within: readonly string[] | undefined): Promise<WebhookDoc[]> {
    return this.deps.webhooks.list(page, within);
  }

  async update(id: string, changes: WebhookUpdateInput, log: Logger): Promise<WebhookDoc> {
    const updated = await this.deps.webhooks.update(id, changes, new Date());
    if (!updated) throw new ProblemError(problems.notFound(SUBSCRIPTION_NOT_FOUND));
    await this.changed();
    log.info({ subscriptionId: updated._id, fields: Object.keys(changes) }, 'webhook subscription updated');
    return updated;
  }

  async remove(id: string, log: Logger): Promise<void> {
    if (!(await this.deps.webhooks.remove(id))) throw new ProblemError(problems.notFound(SUBSCRIPTION_NOT_FOUND));
    await this.changed();
    log.info({ subscriptionId: id }, 'webhook subscription removed');
  }

  /** A new secret; the old one signs beside it for KEY_ROTATION_GRACE, so receivers switch without a gap. */
  async rotateSecret(current: WebhookDoc, log: Logger): Promise<{ doc: WebhookDoc; secret: string }> {
    const now = new Date();
    const secret = newWebhookSecret();
    const rotated = await this.deps.webhooks.rotate(
      current._id,
      this.deps.secrets.seal(secret),
      current.secret,
      new Date(now.getTime() + this.deps.rotationGraceMs),
      now,
    );
    // Another rotation won the race: this one's secret was never stored.
    if (!rotated) throw new ProblemError(problems.conflict('The secret was rotated concurrently; rotate again'));
    log.info({ subscriptionId: rotated._id }, 'webhook secret rotated');
    return { doc: rotated, secret };
  }

  /** Queues a `webhook.test` event to the subscription. */
  test(subscription: WebhookDoc): Promise<QueuedDelivery> {
    const webhookId = `msg_${randomBytes(18).toString('base64url')}`;
    // not an event of the log: an id of its own each time
    const body = unlocatedBody(`evt_${randomBytes(18).toString('base64url')}`, TEST_EVENT_TYPE, new Date(), {
      subscriptionId: subscription._id,
    });
    return this.enqueue({ subscriptionId: subscription._id, webhookId, type: TEST_EVENT_TYPE, body }, webhookId);
  }

  /** Its attempts that `within` (a bound operator's locations; absent: all) may read: by each one's event. */
  deliveryLog(
    subscriptionId: string,
    page: Page<string>,
    within: readonly string[] | undefined,
  ): Promise<WebhookDeliveryDoc[]> {
    return this.deps.deliveryLog.list(subscriptionId, page, within);
  }

  /**
   * The same body and webhook-id again (receivers that saw it drop it), on a schedule of its own;
   * a 404 for an attempt `within` may not read.
   */
  async redeliver(
    subscription: WebhookDoc,
    deliveryId: string,
    within: readonly string[] | undefined,
    log: Logger,
  ): Promise<QueuedDelivery> {
    const entry = await this.deps.deliveryLog.find(subscription._id, deliveryId, within);
    if (!entry) throw new ProblemError(problems.notFound('Delivery does not exist'));
    log.info({ subscriptionId: subscription._id, webhookId: entry.webhookId }, 'webhook redelivery queued');
    return this.enqueue(
      {
        subscriptionId: subscription._id,
        webhookId: entry.webhookId,
        type: entry.type,
        body: entry.body,
        redelivery: true,
      },
      `${entry.webhookId}-redelivery-${randomUUID()}`,
    );
  }

  private async enqueue(delivery: DeliveryJobData, jobId: string): Promise<QueuedDelivery> {
    await this.deps.deliveries.add([delivery], () => jobId);
    return { webhookId: delivery.webhookId, type: delivery.type };
  }

  private changed(): Promise<void> {
    return subscriptionsChanged(this.deps.redis, this.deps.prefix);
  }
}
