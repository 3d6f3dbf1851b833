import os from 'node:os';

/**
 * Once a minute, a line on how the demo is going: orders so far, the register's status-update
 * latency over the minute, and how many orders the hot collection and the archive hold (from the
 * service's /metrics). A long run shows whether latency holds as orders pile up.
 */

export interface MinuteFigures {
  minute: number;
  orders: number;
  updates: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  hot?: number;
  archived?: number;
  /** The lifecycle job's last run. */
  lastRunMs?: number;
  /** The machine's 1-minute load average: latency on a busy machine says little about the service. */
  load: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : 0;
const ms = (value: number) => Math.round(value * 10) / 10;

async function documents(
  origin: string,
  adminToken: string,
): Promise<Pick<MinuteFigures, 'hot' | 'archived' | 'lastRunMs'>> {
  try {
    const headers = { authorization: `Bearer ${adminToken}` };
    const text = await (await fetch(`${origin}/metrics`, { headers, signal: AbortSignal.timeout(5_000) })).text();
    const value = (sample: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
      return line === undefined ? undefined : Number(line.slice(sample.length + 1));
    };
    const lastRun = value('pos_lifecycle_last_run_duration_seconds');
    return {
      hot: value('pos_order_documents{collection="orders"}'),
      archived: value('pos_order_documents{collection="orderArchive"}'),
      lastRunMs: lastRun === undefined ? undefined : Math.round(lastRun * 1000),
    };
  } catch {
    return {};
  }
}

export class PaceReport {
  readonly minutes: MinuteFigures[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly origin: string,
    /** ADMIN_TOKEN: the API's /metrics needs an admin credential. */
    private readonly adminToken: string,
    private readonly sources: { latencies(): number[]; orders(): number },
    private readonly say: (line: string) => void,
    private readonly everyMs = 60_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.report(), this.everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Stops, and reports the part of a minute since the last line (the figures at the very end). */
  async finish(): Promise<void> {
    this.stop();
    await this.report(true);
  }

  private async report(final = false): Promise<void> {
    const sorted = this.sources.latencies().sort((a, b) => a - b);
    const figures: MinuteFigures = {
      minute: this.minutes.length + 1,
      orders: this.sources.orders(),
      updates: sorted.length,
      p50Ms: ms(percentile(sorted, 50)),
      p90Ms: ms(percentile(sorted, 90)),
      p99Ms: ms(percentile(sorted, 99)),
      load: Math.round(os.loadavg()[0]! * 10) / 10,
      ...(await documents(this.origin, this.adminToken)),
    };
    this.minutes.push(figures);
    const count = (n: number | undefined) => (n === undefined ? '?' : String(n));
    const held =
      figures.hot === undefined && figures.archived === undefined
        ? ''
        : `; orders held: ${count(figures.hot)} hot, ${count(figures.archived)} archived`;
    const job = figures.lastRunMs === undefined ? '' : ` (last lifecycle run ${figures.lastRunMs} ms)`;
    this.say(
      `${final ? `end (minute ${figures.minute}, part)` : `minute ${figures.minute}`}: ${figures.orders} orders so far; register status updates this minute: ${figures.updates}, ` +
        `p50 ${figures.p50Ms} ms, p90 ${figures.p90Ms} ms, p99 ` +
        `${figures.p99Ms} ms${held}${job}; load average ${figures.load}`,
    );
  }
}
