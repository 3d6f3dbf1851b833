/**
 * Keeps a deployment's event log near its newest EVENT_LOG_KEPT events while the bench runs. The
 * stand-in MongoDB slows with a collection's size (an insert of two events took it 1.3 ms into an
 * empty log, 15 ms into one of 1,000, a second into one of 8,000), while a real one's cost per
 * event does not grow with the log: trimmed, every scenario runs on a log of a fixed, stated
 * size, whatever ran before it, and the stand-in's slowdown weighs as little as it can on the
 * service (the floor has no log). The service's own retention (EVENT_RETENTION) is days; this
 * stands in for it at the bench's pace.
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
    this.timer = setInterval(() => {
      this.running = this.running.then(async () => {
        const top = await events.find({}, { projection: { _id: 1 } }).sort({ _id: -1 }).limit(1).next();
        if (top && top._id > EVENT_LOG_KEPT) await events.deleteMany({ _id: { $lte: top._id - EVENT_LOG_KEPT } });
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
