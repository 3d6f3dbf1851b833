import type { OrderAction } from '@pos/shared/domain/order-state';
import { type JobOutcome, orderActionJob, sessionCloseJob } from '@pos/shared/queue/jobs';
import type { OrderScope } from '@pos/shared/store/orders';
import type { JobClient, JobRequest } from '../jobs/job-client';

/**
 * Transitions, applied by a worker with the state machine (orders) or its close (sessions): each
 * queued as its job and awaited, within its request's deadline and the queue's admission.
 */
export class Transitions {
  constructor(private readonly jobs: Pick<JobClient, 'run'>) {}

  order(request: JobRequest, scope: OrderScope, orderNumber: number, action: OrderAction): Promise<JobOutcome> {
    return this.jobs.run(orderActionJob(scope, orderNumber, action), request);
  }

  closeSession(request: JobRequest, sessionId: string): Promise<JobOutcome> {
    return this.jobs.run(sessionCloseJob(sessionId), request);
  }
}
