/**
 * Keeps a deployment's event log near its newest EVENT_LOG_KEPT events, and its webhook delivery
 * log near as many attempts, while the bench runs. The stand-in MongoDB slows with a collection's
 * size (an insert of two events took it 1.3 ms into an empty log, 15 ms into one of 1,000, a
 * second into one of 8,000), while a real one's cost per document does not grow with the
 * collection (an insert is a B-tree insert per index, logarithmic in its size): trimmed, every
 * scenario runs on logs of a fixed, stated size, whatever ran before it, and the stand-in's
 * slowdown weighs as little as it can on the service (the floors have no logs). The service's own
 * retention (EVENT_RETENTION, WEBHOOK_LOG_RETENTION) is days; this stands in for it at the
 * bench's pace.
 */
import { MongoClient } from 'mongodb';

export const EVENT_LOG_KEPT = 100;
/** How often it trims. */
export const EVENT_LOG_TRIM_MS = 250;

export class EventLogTrim {
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();

  private constructor(private readonly client: MongoClient, db: string) {
    const events = client.db(db).collection<{ _id: number }>('events');
    // (a delivery attempt's id is a UUIDv7: its order is its time's)
    const attempts = client.db(db).collection<{ _id: string }>('webhookDeliveries');
    this.timer = setInterval(() => {
      this.running = this.running.then(async () => {
        const top = await events.find({}, { projection: { _id: 1 } }).sort({ _id: -1 }).limit(1).next();
        if (top && top._id > EVENT_LOG_KEPT) await events.deleteMany({ _id: { $lte: top._id - EVENT_LOG_KEPT } });
        const kept = await attempts.find({}, { projection: { _id: 1 } }).sort({ _id: -1 }).skip(EVENT_LOG_KEPT).limit(1).next();
        if (kept) await attempts.deleteMany({ _id: { $lte: kept._id } });
      }).catch(() => undefined);
    }, EVENT_LOG_TRIM_MS);
  }

  static async start(mongoUrl: string, db: string): Promise<EventLogTrim> {
    return new EventLogTrim(await MongoClient.connect(mongoUrl), db);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.client.close();
  }
}
