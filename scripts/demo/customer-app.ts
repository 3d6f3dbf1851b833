import type { AdminClient } from '@pos/shared/clients/admin-client';
import { CustomerClient } from '@pos/shared/clients/customer-client';
import { pause } from '@pos/shared/util/pause';
import { Random, describeRows, menuRow, menuRows, totalOf } from './menu';

/**
 * One table's customer app, through the customer API only: it opens an order (SELECTING),
 * changes its mind once (rows replaced), finishes (NEW) and submits it (PLACED), and sometimes
 * asks for the bill or the table state. A guest who walks out closes the session, which aborts
 * the orders the kitchen has not served yet; the next guest at the table gets a new session.
 */
export class CustomerApp {
  ordersSubmitted = 0;
  private client: CustomerClient | undefined;
  private guest = 0;

  constructor(
    private readonly admin: AdminClient,
    private readonly baseUrl: string,
    private readonly locationId: string,
    readonly tableNumber: number,
    private readonly random: Random,
    private readonly say: (line: string) => void,
  ) {}

  private get who(): string {
    return `table ${this.tableNumber} (guest ${this.userNumber})`;
  }

  private get userNumber(): number {
    return this.tableNumber * 100 + this.guest;
  }

  /** A new guest sits down: a CUSTOMER session from the admin API. */
  async sitDown(): Promise<void> {
    this.guest += 1;
    const session = await this.admin.createCustomerSession(this.locationId, this.userNumber, this.tableNumber);
    this.client = new CustomerClient(this.baseUrl, session.apiKey);
  }

  /** One order from start to PLACED; `walkOut` closes the session right after submitting. */
  async order(paceMs: number, signal: AbortSignal, walkOut = false): Promise<void> {
    const client = this.client!;
    const rows = menuRows(1 + Math.floor(this.random() * 2), this.random);
    const order = await client.createOrder(rows);
    this.say(`customer ${this.who}: started order #${order.number} (${order.state}): ${describeRows(order.rows)}`);
    await pause(paceMs / 2, signal);

    const extra = menuRow(this.random);
    const changed = await client.replaceRows(order.number, [...rows, extra]);
    this.say(
      `customer ${this.who}: added ${describeRows([extra])} to order #${order.number} (${changed.rows.length} rows)`,
    );
    await pause(paceMs / 2, signal);

    const finished = await client.finish(order.number);
    const placed = await client.submit(order.number);
    this.ordersSubmitted += 1;
    this.say(
      `customer ${this.who}: finished (${finished.state}) and submitted order ` +
        `#${order.number}: ${placed.state}, total ${totalOf(placed.rows)}`,
    );

    if (!walkOut && this.random() < 0.3) {
      const kind = this.random() < 0.5 ? 'REQUEST_BILL' : 'READ_TABLE_STATE';
      const command = await client.createCommand(kind);
      this.say(
        `customer ${this.who}: asked for ` +
          `${kind === 'REQUEST_BILL' ? 'the bill' : 'the table state'} ` +
          `(command #${command.number})`,
      );
    }

    if (walkOut) {
      await this.leave();
      const [aborted] = await this.admin.listOrders(this.locationId, 'ABORTED', { after: order.number - 1, limit: 1 });
      const outcome = aborted?.number === order.number ? 'ABORTED by the worker' : 'already served';
      this.say(`customer ${this.who}: walked out before order #${order.number} came: session closed, order ${outcome}`);
      await this.sitDown();
    }
  }

  /** The guest leaves: DELETE /customer/session; the key stops working. */
  async leave(): Promise<void> {
    await this.client?.closeSession();
    this.client = undefined;
  }
}
