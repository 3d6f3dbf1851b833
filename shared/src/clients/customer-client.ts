/**
 * A typed client of the customer app API (`{base_url}/customer`), used by the demo and the
 * benchmark. One client is one customer session (its CUSTOMER key).
 */
import type { CommandKind } from '../domain/commands';
import type { CommandRecord, OrderRecord } from '../domain/records';
import type { RowInput } from '../schemas/requests';
import { requestJson } from './json-http';

export class CustomerClient {
  /** @param baseUrl `{base_url}`, e.g. `http://localhost:8080/api/v1` */
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  /** A new order in SELECTING; the session's table unless `tableNumber` is given. */
  createOrder(rows: RowInput[], tableNumber?: number): Promise<OrderRecord> {
    return this.call('POST', '/orders', { rows, tableNumber });
  }

  getOrder(orderNumber: number): Promise<OrderRecord> {
    return this.call('GET', `/orders/${orderNumber}`);
  }

  replaceRows(orderNumber: number, rows: RowInput[]): Promise<OrderRecord> {
    return this.call('PUT', `/orders/${orderNumber}/rows`, { rows });
  }

  /** SELECTING to NEW. */
  finish(orderNumber: number): Promise<OrderRecord> {
    return this.call('POST', `/orders/${orderNumber}/finish`);
  }

  /** NEW to PLACED: the registers see it from now on. */
  submit(orderNumber: number): Promise<OrderRecord> {
    return this.call('POST', `/orders/${orderNumber}/submit`);
  }

  createCommand(
    kind: Extract<CommandKind, 'READ_TABLE_STATE' | 'REQUEST_BILL'>,
    tableNumber?: number,
  ): Promise<CommandRecord> {
    return this.call('POST', '/commands', { kind, tableNumber });
  }

  /** Closes this session: its PLACED orders are aborted and its key stops working. */
  closeSession(): Promise<void> {
    return this.call('DELETE', '/session');
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return requestJson<T>(method, `${this.baseUrl}/customer${path}`, { api_key: this.apiKey }, body);
  }
}
