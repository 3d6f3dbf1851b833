/**
 * One attempt of a delivery: its endpoint's address checked again (DNS rebinding), its body
 * signed afresh (the `webhook-timestamp` is the attempt's) with the endpoint's secret and, during
 * a rotation's grace, the replaced one too, and POSTed. What a single delivery's run and a batch's
 * share, with the parts both use.
 */
import { Webhook } from 'standardwebhooks';
import type { WebhooksConfig } from '@pos/shared/config';
import type { Logger } from '@pos/shared/log';
import type { DeliveryJobData } from '@pos/shared/queue/webhook-queue';
import type { WebhookDoc } from '@pos/shared/store/documents';
import type { EventLogRepo } from '@pos/shared/store/event-log';
import type { WebhookDeliveriesRepo, WebhooksRepo } from '@pos/shared/store/webhooks';
import type { DeliveryQueue } from '@pos/shared/webhooks/delivery-queue';
import type { SecretBox } from '@pos/shared/webhooks/secrets';
import { checkWebhookUrl } from '@pos/shared/webhooks/url-guard';
import type { WebhookMetrics } from '../metrics';
import type { EndpointGuards } from './endpoint-guards';
import { postTo } from './post';

export interface DeliveryDeps {
  webhooks: Pick<WebhooksRepo, 'find' | 'succeeded' | 'failed' | 'disable'>;
  deliveries: Pick<WebhookDeliveriesRepo, 'record' | 'recordAll'>;
  /** Where a settled delivery stops counting as waiting (WEBHOOK_MAX_PENDING), and where a batch's items are put back. */
  pending: Pick<DeliveryQueue, 'settled' | 'dropped' | 'putBack'>;
  /** Where a settled delivery stops being owed by its event (so that no rebuilt queue adds it again), and where a batch run again finds what is still owed. */
  events: Pick<EventLogRepo, 'settled' | 'settledAll' | 'findByEventIds'>;
  guards: EndpointGuards;
  secrets: SecretBox;
  metrics: WebhookMetrics;
  log: Logger;
}

/** The `webhook-signature` header: the current secret's signature, then the replaced one's during its grace. */
function signatures(deps: DeliveryDeps, subscription: WebhookDoc, webhookId: string, at: Date, body: string): string {
  const sealed = [subscription.secret];
  if (subscription.previousSecret && subscription.previousSecretExpiresAt && subscription.previousSecretExpiresAt > at) sealed.push(subscription.previousSecret);
  return sealed.map((s) => new Webhook(deps.secrets.open(s)).sign(webhookId, at, body)).join(' ');
}

interface Attempt {
  statusCode?: number;
  error?: string;
}

/** A 2xx answer: what the circuit counts as a success. */
export const succeeded = (result: unknown): boolean => {
  const code = (result as Attempt).statusCode;
  return code !== undefined && code >= 200 && code < 300;
};

/** One signed POST of a delivery's body to its endpoint, checked again (DNS rebinding). */
export async function attempt(deps: DeliveryDeps, config: WebhooksConfig, subscription: WebhookDoc, data: Pick<DeliveryJobData, 'webhookId' | 'body'>): Promise<Attempt> {
  try {
    const target = await checkWebhookUrl(subscription.url, config.allowPrivate);
    const at = new Date();
    const headers = {
      'webhook-id': data.webhookId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatures(deps, subscription, data.webhookId, at, data.body),
    };
    return { statusCode: await postTo(target, headers, data.body, config.timeoutMs) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

