import type { Db } from 'mongodb';
import type { CommandFields, OrderDoc, OrderFields } from '../domain/records';
import { collections } from './mongo';
import { asInteger, asString } from './query-values';

/**
 * A PLACED order as the work reads it: its record's fields, its failure count (an operator's
 * stream shows it) and its version (a stream tells a repeat from news by it).
 */
export type WorkOrder = OrderFields & Pick<OrderDoc, 'failureCount' | 'version'>;

/** A location's work as registers see it, each list by number. */
export interface Work {
  /** PLACED orders. */
  orders: WorkOrder[];
  /** Live commands: only the fields of their records. */
  commands: CommandFields[];
}

/** What a record needs of an order: everything else (applied job ids above all) stays in MongoDB. */
const ORDER_FIELDS = {
  _id: 0,
  number: 1,
  state: 1,
  tableNumber: 1,
  userNumber: 1,
  rows: 1,
  guestCount: 1,
  orderTime: 1,
  completeTime: 1,
  failedTime: 1,
  failureCount: 1,
  version: 1,
};
const COMMAND_FIELDS = { _id: 0, number: 1, kind: 1, tableNumber: 1 };

/**
 * The register's work, in one round trip: an aggregate over the PLACED orders (index
 * locationId, state, number) that appends the live commands ($unionWith, index locationId,
 * number), both projected to what their records show.
 */
export class WorkRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db);
  }

  /** PLACED orders above `ordersAfter` and commands live at `now` above `commandsAfter`. */
  async list(locationId: string, now: Date, ordersAfter = 0, commandsAfter = 0): Promise<Work> {
    const location = asString(locationId, 'locationId');
    const docs = await this.c.orders
      .aggregate<WorkOrder | CommandFields>([
        { $match: { locationId: location, state: 'PLACED', number: { $gt: asInteger(ordersAfter, 'ordersAfter') } } },
        { $sort: { number: 1 } },
        { $project: ORDER_FIELDS },
        {
          $unionWith: {
            coll: this.c.commands.collectionName,
            pipeline: [
              { $match: { locationId: location, number: { $gt: asInteger(commandsAfter, 'commandsAfter') }, expiresAt: { $gt: now } } },
              { $sort: { number: 1 } },
              { $project: COMMAND_FIELDS },
            ],
          },
        },
      ])
      .toArray();
    const work: Work = { orders: [], commands: [] };
    for (const doc of docs) {
      if ('kind' in doc) work.commands.push(doc);
      else work.orders.push(doc);
    }
    // Each part comes sorted; the union's output order is not promised, so sort (linear when sorted).
    work.orders.sort(byNumber);
    work.commands.sort(byNumber);
    return work;
  }
}

const byNumber = (a: { number: number }, b: { number: number }) => a.number - b.number;
