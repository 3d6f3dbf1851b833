/**
 * A typed client of the admin API (`/admin/v1`), used by the admin command-line tool,
 * the demo, the benchmark and the tests.
 */
import type { CommandKind } from '../domain/commands';
import type { OrderState } from '../domain/order-state';
import type { CommandRecord, OperatorOrderRecord, OrderRecord } from '../domain/records';
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

  /** The location's orders in `state`, each with its failure count. */
  listOrders(locationId: string, state: OrderState): Promise<OperatorOrderRecord[]> {
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/orders?state=${state}`);
  }

  /** The live commands, as the register's work list shows them. */
  listCommands(locationId: string): Promise<CommandRecord[]> {
    return this.call('GET', `/locations/${encodeURIComponent(locationId)}/commands`);
  }

  /** A status update on the location's behalf (the register's, through the same queue). */
  updateStatus(locationId: string, orderNumber: number, newState: OrderState): Promise<OrderRecord> {
    return this.call('PUT', `/locations/${encodeURIComponent(locationId)}/orders/${orderNumber}/statusupdate`, { newState });
  }

  acknowledgeCommand(locationId: string, commandNumber: number): Promise<CommandRecord> {
    return this.call('DELETE', `/locations/${encodeURIComponent(locationId)}/commands/${commandNumber}`);
  }

  recoverOrder(locationId: string, orderNumber: number): Promise<OrderRecord> {
    return this.call('POST', `/locations/${encodeURIComponent(locationId)}/orders/${orderNumber}/recover`);
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return requestJson<T>(method, `${this.origin}/admin/v1${path}`, { authorization: `Bearer ${this.token}` }, body);
  }
}
