/**
 * A typed client of the admin API (`/admin/v1`), used by the admin command-line tool,
 * the demo, the benchmark and the tests.
 */
import type { CommandKind } from '../domain/commands';
import type { OrderState } from '../domain/order-state';
import type { CommandRecord, OperatorOrderRecord, OrderRecord } from '../domain/records';
import type {
  LocationUpdateInput,
  OperatorInput,
  OperatorUpdateInput,
  PauseInput,
  RowInput,
  WebhookInput,
  WebhookUpdateInput,
} from '../schemas/requests';
import type { FeedEvent } from '../schemas/feed-event';
import type { AvailabilityInput, AvailabilityView, MenuDocument, MenuPublishView, MenuView } from '../schemas/menu';
import type {
  AuditRecord,
  AuditVerification,
  CurrentOperator,
  IssuedOperator,
  IssuedSession,
  IssuedWebhook,
  LocationView,
  OperatorView,
  PresenceView,
  QueuedDelivery,
  RotatedSession,
  SessionView,
  WebhookDelivery,
  WebhookView,
} from '../schemas/responses';
import { historyCursorOf } from '../schemas/history-cursor';
import { requestJson } from './json-http';

/** Completion times of the history: from (inclusive) to (exclusive), ISO-8601. */
export interface HistoryRange {
  from?: string;
  to?: string;
}

export type {
  AuditRecord,
  AuditVerification,
  IssuedOperator,
  IssuedSession,
  IssuedWebhook,
  OperatorView,
  QueuedDelivery,
  RotatedSession,
  WebhookDelivery,
  WebhookView,
};

/** The audit log's filters: a location, an operator, a time range [from, to) in ISO-8601. */
export interface AuditFilter {
  locationId?: string;
  operatorId?: string;
  from?: string;
  to?: string;
}

/**
 * Which page of a list: at most `limit` (default 100, at most 1000) items
 * after `after`, the last cursor of the previous page.
 */
export interface PageOptions<Cursor> {
  limit?: number;
  after?: Cursor;
}

/** The page size of the walks through a whole list (the most a page may hold). */
const ALL_PAGE = 1000;

function pageQuery(page: PageOptions<string | number>, query = new URLSearchParams()): string {
  if (page.limit !== undefined) query.set('limit', String(page.limit));
  if (page.after !== undefined) query.set('after', String(page.after));
  const text = query.toString();
  return text ? `?${text}` : '';
}

export class AdminClient {
  /** @param origin e.g. `http://localhost:8080` (the admin API lives at the root, not under the base path) */
  constructor(
    private readonly origin: string,
    private readonly token: string,
  ) {}

  createLocation(name: string, failureThreshold?: number): Promise<LocationView> {
    return this.call('POST', '/locations', { name, failureThreshold });
  }

  getLocation(id: string): Promise<LocationView> {
    return this.call('GET', `/locations/${encodeURIComponent(id)}`);
  }

  /**
   * Locations in creation order; `after` is the last id of the previous page;
   * `online` keeps those online (or, false, the dark ones).
   */
  listLocations(page: PageOptions<string> & { online?: boolean } = {}): Promise<LocationView[]> {
    const query = new URLSearchParams();
    if (page.online !== undefined) query.set('online', String(page.online));
    return this.call('GET', `/locations${pageQuery(page, query)}`);
  }

  /** Whether a register is there: online, since when, and each register seen within PRESENCE_WINDOW. */
  getPresence(id: string): Promise<PresenceView> {
    return this.call('GET', `/locations/${encodeURIComponent(id)}/presence`);
  }

  /** Pauses a location (customers refused) until `until` (ISO-8601), or until resumed. */
  pauseLocation(id: string, pause: PauseInput = {}): Promise<LocationView> {
    return this.call('PUT', `/locations/${encodeURIComponent(id)}/pause`, pause);
  }

  resumeLocation(id: string): Promise<LocationView> {
    return this.call('DELETE', `/locations/${encodeURIComponent(id)}/pause`);
  }

  /**
   * Changes a location's name, failure threshold or order deadline (each
   * holds from the next failure report or placement on).
   */
  updateLocation(id: string, changes: LocationUpdateInput): Promise<LocationView> {
    return this.call('PATCH', `/locations/${encodeURIComponent(id)}`, changes);
  }

  /** A location's sessions in creation order, open and closed; never a key. */
  listSessions(locationId: string, page: PageOptions<string> = {}): Promise<SessionView[]> {
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/sessions${pageQuery(page)}`);
  }

  /** A new key for the session, shown this once; the old one works for KEY_ROTATION_GRACE more. */
  rotateKey(sessionId: string): Promise<RotatedSession> {
    return this.call('POST', `/sessions/${encodeURIComponent(sessionId)}/rotate-key`);
  }

  createServiceSession(locationId: string, deviceId: string, expiresAt?: string): Promise<IssuedSession> {
    return this.call('POST', `/locations/${encodeURIComponent(locationId)}/service-sessions`, {
      deviceId,
      expiresAt,
    });
  }

  createCustomerSession(locationId: string, userNumber: number, tableNumber?: number): Promise<IssuedSession> {
    return this.call('POST', `/locations/${encodeURIComponent(locationId)}/customer-sessions`, {
      userNumber,
      tableNumber,
    });
  }

  closeSession(sessionId: string): Promise<void> {
    return this.call('DELETE', `/sessions/${encodeURIComponent(sessionId)}`);
  }

  createOrder(locationId: string, rows: RowInput[], tableNumber?: number): Promise<OrderRecord> {
    return this.call('POST', `/locations/${encodeURIComponent(locationId)}/orders`, {
      rows,
      tableNumber,
    });
  }

  createCommand(locationId: string, kind: CommandKind, tableNumber?: number): Promise<CommandRecord> {
    return this.call('POST', `/locations/${encodeURIComponent(locationId)}/commands`, {
      kind,
      tableNumber,
    });
  }

  /** A location's menu, with each product's availability now. */
  getMenu(locationId: string): Promise<MenuView> {
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/menu`);
  }

  /**
   * Replaces a location's menu (and asks its registers to fetch it);
   * `ifMatch`: only while it is at that ETag's version.
   */
  putMenu(locationId: string, menu: MenuDocument, ifMatch?: string): Promise<MenuView> {
    return this.call(
      'PUT',
      `/locations/${encodeURIComponent(locationId)}/menu`,
      menu,
      ifMatch === undefined ? {} : { 'if-match': ifMatch },
    );
  }

  /** Snoozes (86es) a product of a location's menu, or lifts its snooze (`available: true`). */
  setAvailability(locationId: string, productId: string, availability: AvailabilityInput): Promise<AvailabilityView> {
    return this.call(
      'PUT',
      `/locations/${encodeURIComponent(locationId)}/menu/items/${encodeURIComponent(productId)}/availability`,
      availability,
    );
  }

  /** One menu to many locations (up to 1,000), all or none. */
  publishMenu(locationIds: string[], menu: MenuDocument): Promise<MenuPublishView> {
    return this.call('POST', '/menus/publish', { locationIds, menu });
  }

  /**
   * One page of a location's orders in a state (each with its failure count), by
   * number; `after` is the last number of the previous page.
   */
  listOrders(
    locationId: string,
    state: OrderState,
    page: PageOptions<number> & { overdue?: boolean } = {},
  ): Promise<OperatorOrderRecord[]> {
    const query = new URLSearchParams({ state });
    if (page.overdue !== undefined) query.set('overdue', String(page.overdue));
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/orders${pageQuery(page, query)}`);
  }

  /** Every order of a location in a state, page after page. */
  async allOrders(locationId: string, state: OrderState): Promise<OperatorOrderRecord[]> {
    const all: OperatorOrderRecord[] = [];
    for (;;) {
      const page = await this.listOrders(locationId, state, { limit: ALL_PAGE, after: all.at(-1)?.number });
      all.push(...page);
      if (page.length < ALL_PAGE) return all;
    }
  }

  /** One page of a location's live commands, by number. */
  listCommands(locationId: string, page: PageOptions<number> = {}): Promise<CommandRecord[]> {
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/commands${pageQuery(page)}`);
  }

  /** A status update on the location's behalf (the register's, through the same queue). */
  updateStatus(locationId: string, orderNumber: number, newState: OrderState): Promise<OrderRecord> {
    return this.call('PUT', `/locations/${encodeURIComponent(locationId)}/orders/${orderNumber}/statusupdate`, {
      newState,
    });
  }

  acknowledgeCommand(locationId: string, commandNumber: number): Promise<CommandRecord> {
    return this.call('DELETE', `/locations/${encodeURIComponent(locationId)}/commands/${commandNumber}`);
  }

  /**
   * One page of a location's archived finished orders, by completion time then number, completed
   * in [`from`, `to`); `after` is `historyCursorOf` the last order of the previous page.
   */
  orderHistory(locationId: string, query: HistoryRange & PageOptions<string> = {}): Promise<OrderRecord[]> {
    const range = new URLSearchParams();
    if (query.from !== undefined) range.set('from', query.from);
    if (query.to !== undefined) range.set('to', query.to);
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/history${pageQuery(query, range)}`);
  }

  /** Every archived order of a location in the range, page after page. */
  async allHistory(locationId: string, range: HistoryRange = {}): Promise<OrderRecord[]> {
    const all: OrderRecord[] = [];
    for (;;) {
      const last = all.at(-1);
      const page = await this.orderHistory(locationId, {
        ...range,
        limit: ALL_PAGE,
        after: last && historyCursorOf(last),
      });
      all.push(...page);
      if (page.length < ALL_PAGE) return all;
    }
  }

  recoverOrder(locationId: string, orderNumber: number): Promise<OrderRecord> {
    return this.call('POST', `/locations/${encodeURIComponent(locationId)}/orders/${orderNumber}/recover`);
  }

  /** Subscribes an endpoint; the answer holds its secret, shown this once. */
  createWebhook(input: WebhookInput): Promise<IssuedWebhook> {
    return this.call('POST', '/webhooks', input);
  }

  listWebhooks(page: PageOptions<string> = {}): Promise<WebhookView[]> {
    return this.call('GET', `/webhooks${pageQuery(page)}`);
  }

  getWebhook(id: string): Promise<WebhookView> {
    return this.call('GET', `/webhooks/${encodeURIComponent(id)}`);
  }

  updateWebhook(id: string, changes: WebhookUpdateInput): Promise<WebhookView> {
    return this.call('PATCH', `/webhooks/${encodeURIComponent(id)}`, changes);
  }

  deleteWebhook(id: string): Promise<void> {
    return this.call('DELETE', `/webhooks/${encodeURIComponent(id)}`);
  }

  /** A new secret, shown this once; the old one signs too for KEY_ROTATION_GRACE more. */
  rotateWebhookSecret(id: string): Promise<IssuedWebhook> {
    return this.call('POST', `/webhooks/${encodeURIComponent(id)}/rotate-secret`);
  }

  /** Queues a `webhook.test` delivery. */
  testWebhook(id: string): Promise<QueuedDelivery> {
    return this.call('POST', `/webhooks/${encodeURIComponent(id)}/test`);
  }

  /** One page of the endpoint's delivery attempts, newest first; `after` is the last id of the previous page. */
  listWebhookDeliveries(id: string, page: PageOptions<string> = {}): Promise<WebhookDelivery[]> {
    return this.call('GET', `/webhooks/${encodeURIComponent(id)}/deliveries${pageQuery(page)}`);
  }

  redeliverWebhook(id: string, deliveryId: string): Promise<QueuedDelivery> {
    return this.call(
      'POST',
      `/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
    );
  }

  /** Who this client's token is. */
  me(): Promise<CurrentOperator> {
    return this.call('GET', '/me');
  }

  /** A new operator account (admins only); its token is in this answer only. */
  createOperator(operator: OperatorInput): Promise<IssuedOperator> {
    return this.call('POST', '/operators', operator);
  }

  listOperators(page: PageOptions<string> = {}): Promise<OperatorView[]> {
    return this.call('GET', `/operators${pageQuery(page)}`);
  }

  getOperator(id: string): Promise<OperatorView> {
    return this.call('GET', `/operators/${encodeURIComponent(id)}`);
  }

  /** Changes its name, role or locations (`allLocations: true`: every location); holds on every node at once. */
  updateOperator(id: string, changes: OperatorUpdateInput): Promise<OperatorView> {
    return this.call('PATCH', `/operators/${encodeURIComponent(id)}`, changes);
  }

  /** A new token, shown this once; the old one stops at once. */
  rotateOperatorToken(id: string): Promise<IssuedOperator> {
    return this.call('POST', `/operators/${encodeURIComponent(id)}/rotate-token`);
  }

  deleteOperator(id: string): Promise<void> {
    return this.call('DELETE', `/operators/${encodeURIComponent(id)}`);
  }

  /**
   * One page of the event feed, oldest first; `after` is the `id` of the last event of the previous
   * page (docs/webhooks.md#the-event-feed).
   */
  listEvents(filter: { locationId?: string; types?: string[] } & PageOptions<string> = {}): Promise<FeedEvent[]> {
    const query = new URLSearchParams();
    if (filter.locationId !== undefined) query.set('locationId', filter.locationId);
    if (filter.types !== undefined) query.set('types', filter.types.join(','));
    return this.call('GET', `/events${pageQuery(filter, query)}`);
  }

  /** The feed from after `after` (absent: its start) to its end: every page. */
  async allEvents(filter: { locationId?: string; types?: string[]; after?: string } = {}): Promise<FeedEvent[]> {
    const all: FeedEvent[] = [];
    for (;;) {
      const page = await this.listEvents({ ...filter, limit: ALL_PAGE, after: all.at(-1)?.id ?? filter.after });
      all.push(...page);
      if (page.length < ALL_PAGE) return all;
    }
  }

  /** One page of the audit log, newest first; `after` is the id of the last record of the previous page. */
  listAudit(filter: AuditFilter & PageOptions<string> = {}): Promise<AuditRecord[]> {
    const query = new URLSearchParams();
    for (const name of ['locationId', 'operatorId', 'from', 'to'] as const)
      if (filter[name] !== undefined) query.set(name, filter[name]);
    return this.call('GET', `/audit${pageQuery(filter, query)}`);
  }

  /** One stretch of the audit chain's check, after the record `after` (absent: from where the chain starts). */
  verifyAudit(options: { after?: number; limit?: number } = {}): Promise<AuditVerification> {
    const query = new URLSearchParams();
    if (options.after !== undefined) query.set('after', String(options.after));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const text = query.toString();
    return this.call('GET', `/audit/verify${text ? `?${text}` : ''}`);
  }

  /** The whole chain, stretch by stretch: what the last stretch found, with every record checked counted. */
  async verifyAuditChain(): Promise<AuditVerification> {
    let result = await this.verifyAudit();
    let checked = result.checked;
    const firstSeq = result.firstSeq;
    while (result.intact && !result.complete && result.lastSeq !== undefined) {
      result = await this.verifyAudit({ after: result.lastSeq });
      checked += result.checked;
    }
    return { ...result, checked, ...(firstSeq !== undefined && { firstSeq }) };
  }

  private call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return requestJson<T>(
      method,
      `${this.origin}/admin/v1${path}`,
      { ...headers, authorization: `Bearer ${this.token}` },
      body,
    );
  }
}
