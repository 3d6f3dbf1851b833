/**
 * Attempts of deliveries: each body signed afresh (the `webhook-timestamp` is the attempt's) with
 * the endpoint's secret and, during a rotation's grace, the replaced one too, and POSTed. What a
 * single delivery's run and a batch's share, with the parts both use.
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
import { type CheckedUrl, checkWebhookUrl } from '@pos/shared/webhooks/url-guard';
import type { WebhookMetrics } from '../metrics';
import type { EndpointGuards } from './endpoint-guards';
import { postTo } from './post';

export interface DeliveryDeps {
  webhooks: Pick<WebhooksRepo, 'find' | 'succeeded' | 'failed' | 'disable'>;
  deliveries: Pick<WebhookDeliveriesRepo, 'record' | 'recordAll'>;
  /**
   * Where a settled delivery stops counting as waiting (WEBHOOK_MAX_PENDING), and where a batch's items are put back.
   */
  pending: Pick<DeliveryQueue, 'settled' | 'dropped' | 'putBack'>;
  /**
   * Where a settled delivery stops being owed by its event (so that no rebuilt queue adds
   * it again), and where a batch run again finds what is still owed.
   */
  events: Pick<EventLogRepo, 'settled' | 'settledAll' | 'findByEventIds'>;
  guards: EndpointGuards;
  secrets: SecretBox;
  metrics: WebhookMetrics;
  log: Logger;
}

export interface Attempt {
  statusCode?: number;
  error?: string;
}

/** A 2xx answer: what the circuit counts as a success. */
export const succeeded = (result: unknown): boolean => {
  const code = (result as Attempt).statusCode;
  return code !== undefined && code >= 200 && code < 300;
};

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Attempts of deliveries to one subscription's endpoint. */
export type Endpoint = (data: Pick<DeliveryJobData, 'webhookId' | 'body'>) => Promise<Attempt>;

/**
 * A subscription's endpoint, for the attempts of one run: its address checked again now (DNS
 * rebinding; a refused one fails every attempt), its secrets opened once. Each attempt is signed
 * afresh: the current secret's signature, then the replaced one's while its grace lasts.
 */
export async function endpointOf(
  deps: DeliveryDeps,
  config: WebhooksConfig,
  subscription: WebhookDoc,
): Promise<Endpoint> {
  const { previousSecret, previousSecretExpiresAt } = subscription;
  let target: CheckedUrl;
  let current: Webhook;
  let previous: Webhook | undefined;
  try {
    target = await checkWebhookUrl(subscription.url, config.allowPrivate);
    current = new Webhook(deps.secrets.open(subscription.secret));
    // (a replaced secret past its grace signs nothing, so it is not opened)
    previous =
      previousSecret && previousSecretExpiresAt && previousSecretExpiresAt > new Date()
        ? new Webhook(deps.secrets.open(previousSecret))
        : undefined;
  } catch (err) {
    const error = message(err);
    return async () => ({ error });
  }
  return async ({ webhookId, body }) => {
    try {
      const at = new Date();
      const signers = previous && previousSecretExpiresAt! > at ? [current, previous] : [current];
      const headers = {
        'webhook-id': webhookId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signers.map((signer) => signer.sign(webhookId, at, body)).join(' '),
      };
      return { statusCode: await postTo(target, headers, body, config.timeoutMs) };
    } catch (err) {
      return { error: message(err) };
    }
  };
}
