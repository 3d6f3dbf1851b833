import { isOrderRecord, type CommandRecord, type OrderRecord } from '@pos/shared/domain/records';
import { RegisterClient, RegisterProblemError } from '@pos/shared/clients/register/client';
import { pause } from '@pos/shared/util/pause';
import { describeRows, totalOf } from './menu';

/** The kind a command record carries, for the narration. */
function commandKind(command: CommandRecord): string {
  if (command.readTableState) return 'READ_TABLE_STATE';
  if (command.paymentNumber) return 'REQUEST_BILL';
  return 'EXPORT_DATA';
}

/**
 * A register at the restaurant, through the register interface only: it polls the location's
 * work, gives each new order one poll of kitchen time, then serves it. Every 5th order first hits
 * a printer jam (a failure report: the order comes straight back as PLACED), every 7th is cancelled
 * at the counter (ABORTED). Commands are acknowledged.
 */
export class RegisterDesk {
  completed = 0;
  aborted = 0;
  failuresReported = 0;
  commandsAcknowledged = 0;
  /** Milliseconds of each status update and failure report since the last `takeLatencies()`. */
  private latencies: number[] = [];
  /** Polls so far, and what the last one held. */
  polls = 0;
  private lastPoll = { orders: 0, commands: 0 };
  private readonly seen = new Map<number, number>();

  constructor(
    private readonly client: RegisterClient,
    private readonly paceMs: number,
    private readonly say: (line: string) => void,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.pollOnce();
      } catch (err) {
        if (!signal.aborted) this.say(`register: ${(err as Error).message}; trying again`);
      }
      await pause(this.paceMs, signal);
    }
  }

  /** The latencies recorded since the last call. */
  takeLatencies(): number[] {
    return this.latencies.splice(0);
  }

  /** A transition of the register (a queued job, the worker's write, the reply), timed. */
  private async timed<T>(request: Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await request;
    this.latencies.push(performance.now() - started);
    return result;
  }

  /** True once a poll numbered above `afterPoll` found no work left. */
  idleAfter(afterPoll: number): boolean {
    return this.polls > afterPoll && this.lastPoll.orders === 0 && this.lastPoll.commands === 0;
  }

  private async pollOnce(): Promise<void> {
    const work = await this.client.listWork();
    let orders = 0;
    for (const record of work) {
      if (isOrderRecord(record)) {
        orders += 1;
        await this.handleOrder(record);
      } else {
        await this.acknowledge(record);
      }
    }
    this.polls += 1;
    this.lastPoll = { orders, commands: work.length - orders };
  }

  private async handleOrder(order: OrderRecord): Promise<void> {
    const polls = (this.seen.get(order.number) ?? 0) + 1;
    this.seen.set(order.number, polls);
    const table = order.tableNumber ? `table ${order.tableNumber}` : 'takeout';
    if (polls === 1) {
      this.say(
        `register: new order #${order.number} for ${table}: ` +
          `${describeRows(order.rows)} (${totalOf(order.rows)}); cooking`,
      );
      return;
    }
    try {
      if (order.number % 5 === 0 && !order.failedTime) {
        const after = await this.timed(this.client.reportFailure(order.number, 'printer jam'));
        this.failuresReported += 1;
        this.say(
          `register: printer jam on order #${order.number}; failure reported, the order is ${after.state} again`,
        );
      } else if (order.number % 7 === 0) {
        await this.timed(this.client.updateStatus(order.number, 'ABORTED'));
        this.aborted += 1;
        this.say(`register: order #${order.number} cancelled at the counter: ABORTED`);
      } else {
        const done = await this.timed(this.client.updateStatus(order.number, 'COMPLETED'));
        this.completed += 1;
        this.say(`register: served order #${order.number} to ${table}: ${done.state}`);
      }
    } catch (err) {
      // Another hand got there first (the customer walked out): the answer says what the order is now.
      if (err instanceof RegisterProblemError && err.status === 409) {
        this.say(`register: order #${order.number} changed meanwhile: ${err.problem.detail}`);
        return;
      }
      throw err;
    }
  }

  private async acknowledge(command: CommandRecord): Promise<void> {
    const table = command.tableNumber ? ` for table ${command.tableNumber}` : '';
    await this.client.acknowledgeCommand(command.number);
    this.commandsAcknowledged += 1;
    this.say(`register: acknowledged command #${command.number} (${commandKind(command)}${table})`);
  }
}
