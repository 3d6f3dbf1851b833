/**
 * The audit log: one document per operator write, kept until `purgeAt` (AUDIT_RETENTION after
 * it), read newest first. Ids are UUIDv7, so `_id` order is time order.
 */
import type { Db, Filter } from 'mongodb';
import type { AuditRecord } from '../schemas/responses';
import type { AuditDoc } from './documents';
import { collections, deleteDue } from './mongo';
import type { Page } from './page';
import { asString } from './query-values';

export type { AuditDoc };

export interface AuditFilter {
  locationId?: string;
  operatorId?: string;
  from?: Date;
  to?: Date;
  /** The reader's scope: records of these locations only (a scoped manager). Absent: all. */
  withinLocations?: readonly string[];
}

export function toAuditRecord(doc: AuditDoc): AuditRecord {
  const record: AuditRecord = {
    id: doc._id,
    at: doc.at.toISOString(),
    operatorName: doc.operatorName,
    role: doc.role,
    method: doc.method,
    route: doc.route,
    targets: doc.targets,
    status: doc.status,
    requestId: doc.requestId,
  };
  if (doc.operatorId !== undefined) record.operatorId = doc.operatorId;
  if (doc.locationId !== undefined) record.locationId = doc.locationId;
  return record;
}

export class AuditRepo {
  private readonly c;

  constructor(db: Db) {
    this.c = collections(db).audit;
  }

  async insert(doc: AuditDoc): Promise<void> {
    await this.c.insertOne(doc);
  }

  /** One page, newest first; `after` is the id of the last record of the previous page. */
  list(filter: AuditFilter, page: Page<string>): Promise<AuditDoc[]> {
    const query: Filter<AuditDoc> = {};
    if (filter.locationId !== undefined) query.locationId = asString(filter.locationId, 'locationId');
    if (filter.withinLocations) {
      const within = filter.withinLocations.map((id) => asString(id, 'locationId'));
      query.locationId = filter.locationId === undefined ? { $in: within } : within.includes(query.locationId as string) ? query.locationId : { $in: [] };
    }
    if (filter.operatorId !== undefined) query.operatorId = asString(filter.operatorId, 'operatorId');
    if (filter.from || filter.to) query.at = { ...(filter.from && { $gte: filter.from }), ...(filter.to && { $lt: filter.to }) };
    if (page.after !== undefined) query._id = { $lt: asString(page.after, 'after') };
    return this.c.find(query).sort({ _id: -1 }).limit(page.limit).toArray();
  }

  /** Removes up to `limit` records past their retention (where no TTL monitor runs). */
  purge(now: Date, limit: number): Promise<number> {
    return deleteDue(this.c, 'purgeAt', now, limit);
  }
}
