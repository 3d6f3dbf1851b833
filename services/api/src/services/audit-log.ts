import type { AuditQuery } from '@pos/shared/schemas/queries';
import type { AuditVerification } from '@pos/shared/schemas/responses';
import type { AuditDoc, AuditRepo } from '@pos/shared/store/audit';

/** The audit log as operators read it: newest first, within the reader's locations; and its hash chain's check. */
export class AuditLog {
  constructor(private readonly audit: Pick<AuditRepo, 'list' | 'verify'>) {}

  list(query: AuditQuery, withinLocations: readonly string[] | undefined): Promise<AuditDoc[]> {
    return this.audit.list(
      {
        locationId: query.locationId,
        operatorId: query.operatorId,
        from: query.from === undefined ? undefined : new Date(query.from),
        to: query.to === undefined ? undefined : new Date(query.to),
        withinLocations,
      },
      { limit: query.limit, after: query.after },
    );
  }

  verify(after: number | undefined, limit: number): Promise<AuditVerification> {
    return this.audit.verify(after, limit);
  }
}
