/**
 * A typed client of the admin API (`/admin/v1`), used by the admin command-line tool,
 * the demo, the benchmark and the tests.
 */
import type { CommandKind } from '../domain/commands';
import type { OrderState } from '../domain/order-state';
import type { CommandRecord, OrderRecord } from '../domain/records';
import type { OrderHistoryPage } from '../schemas/history';
import type { RowInput } from '../schemas/requests';
import type { LocationView } from '../store/locations';
import type { SessionView } from '../store/sessions';
import { requestJson } from './json-http';

export type IssuedSession = SessionView & { apiKey: string };

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

  listOrders(locationId: string, state: OrderState): Promise<OrderRecord[]> {
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/orders?state=${state}`);
  }

  /** One page of a location's archived finished orders; pass `next` back as `after` for the next. */
  orderHistory(locationId: string, query: { from?: string; to?: string; limit?: number; after?: string } = {}): Promise<OrderHistoryPage> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
    const search = params.size > 0 ? `?${params}` : '';
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/history${search}`);
  }

  recoverOrder(locationId: string, orderNumber: number): Promise<OrderRecord> {
    return this.call('POST', `/locations/${encodeURIComponent(locationId)}/orders/${orderNumber}/recover`);
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return requestJson<T>(method, `${this.origin}/admin/v1${path}`, { authorization: `Bearer ${this.token}` }, body);
  }
}
