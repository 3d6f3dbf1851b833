import type { Db } from 'mongodb';
import type { CommandFields, OrderFields } from '../domain/records';
import type { OrderDoc } from './documents';
import { collections } from './mongo';
import { asInteger, asString } from './query-values';

/**
 * A PLACED order as the work reads it: its record's fields, its failure count and overdue mark (an operator's
 * stream shows them) and its version (a stream tells a repeat from news by it).
 */
export type WorkOrder = OrderFields & Pick<OrderDoc, 'failureCount' | 'version' | 'overdue'>;

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
  overdue: 1,
  version: 1,
};
const COMMAND_FIELDS = { _id: 0, number: 1, kind: 1, tableNumber: 1 };

/** A location's work, with the location it belongs to: what a read of several locations returns. */
type LocatedOrder = WorkOrder & { locationId: string };
type LocatedCommand = CommandFields & { locationId: string };

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
    const docs = await this.read(asString(locationId, 'locationId'), now, ordersAfter, commandsAfter, false).toArray();
    const work: Work = { orders: [], commands: [] };
    for (const doc of docs) {
      if ('kind' in doc) work.commands.push(doc);
      else work.orders.push(doc);
    }
    return sorted(work);
  }

  /**
   * The work of several locations in the same one round trip (`locationId $in`, each branch on
   * the same index as `list`), by location; a location with none is absent. The floors apply to
   * all of them: a caller with a floor per location filters the rest itself.
   */
  async listForLocations(
    locationIds: string[],
    now: Date,
    ordersAfter = 0,
    commandsAfter = 0,
  ): Promise<Map<string, Work>> {
    const ids = locationIds.map((id) => asString(id, 'locationId'));
    const byLocation = new Map<string, Work>();
    if (ids.length === 0) return byLocation;
    for await (const doc of this.read({ $in: ids }, now, ordersAfter, commandsAfter, true) as AsyncIterable<
      LocatedOrder | LocatedCommand
    >) {
      const { locationId, ...fields } = doc;
      let work = byLocation.get(locationId);
      if (!work) byLocation.set(locationId, (work = { orders: [], commands: [] }));
      if ('kind' in fields) work.commands.push(fields);
      else work.orders.push(fields);
    }
    for (const work of byLocation.values()) sorted(work);
    return byLocation;
  }

  private read(
    location: string | { $in: string[] },
    now: Date,
    ordersAfter: number,
    commandsAfter: number,
    located: boolean,
  ) {
    // Several locations are sorted here, location by location, rather than merged by the server.
    const sort = located ? [] : [{ $sort: { number: 1 } }];
    const withLocation = located ? { locationId: 1 } : {};
    return this.c.orders.aggregate<WorkOrder | CommandFields>([
      { $match: { locationId: location, state: 'PLACED', number: { $gt: asInteger(ordersAfter, 'ordersAfter') } } },
      ...sort,
      { $project: { ...ORDER_FIELDS, ...withLocation } },
      {
        $unionWith: {
          coll: this.c.commands.collectionName,
          pipeline: [
            {
              $match: {
                locationId: location,
                number: { $gt: asInteger(commandsAfter, 'commandsAfter') },
                expiresAt: { $gt: now },
                acknowledgedAt: { $exists: false },
              },
            },
            ...sort,
            { $project: { ...COMMAND_FIELDS, ...withLocation } },
          ],
        },
      },
    ]);
  }
}

/** Each part comes sorted; the union's output order is not promised, so sort (linear when sorted). */
function sorted(work: Work): Work {
  work.orders.sort(byNumber);
  work.commands.sort(byNumber);
  return work;
}

const byNumber = (a: { number: number }, b: { number: number }) => a.number - b.number;
