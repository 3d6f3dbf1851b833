/**
 * Every repository of a process, made once by its composition root (the API's server.ts, the
 * worker's worker.ts) on its database: one instance each, handed on as parts of this.
 */
import type { Db } from 'mongodb';
import { OrderArchiveRepo } from './archive';
import { AuditRepo } from './audit';
import { CommandsRepo } from './commands';
import { EventLogRepo } from './event-log';
import { LeasesRepo } from './leases';
import { LocationsRepo } from './locations';
import { MenusRepo } from './menus';
import { OperatorsRepo } from './operators';
import { OrdersRepo } from './orders';
import { SessionsRepo } from './sessions';
import { WebhookDeliveriesRepo, WebhooksRepo } from './webhooks';
import { WorkRepo } from './work';

export interface Repos {
  orders: OrdersRepo;
  archive: OrderArchiveRepo;
  commands: CommandsRepo;
  /** The register's work (PLACED orders and live commands) in one read. */
  work: WorkRepo;
  locations: LocationsRepo;
  /** Menu documents, and each location's menu and snoozes. */
  menus: MenusRepo;
  sessions: SessionsRepo;
  operators: OperatorsRepo;
  audit: AuditRepo;
  webhooks: WebhooksRepo;
  webhookDeliveries: WebhookDeliveriesRepo;
  /** The event log: the feed, and what webhooks are delivered from. */
  events: EventLogRepo;
  leases: LeasesRepo;
}

export interface RepoOptions {
  /** IDEMPOTENCY_TTL: how long job ids an order moved to the applied-jobs ledger are kept. */
  appliedJobsKeptMs: number;
}

/** IDEMPOTENCY_TTL's default, for tools and tests that load no configuration. */
const DEFAULT_OPTIONS: RepoOptions = { appliedJobsKeptMs: 24 * 60 * 60 * 1000 };

export function createRepos(db: Db, options: RepoOptions = DEFAULT_OPTIONS): Repos {
  const locations = new LocationsRepo(db);
  return {
    orders: new OrdersRepo(db, options.appliedJobsKeptMs),
    archive: new OrderArchiveRepo(db),
    commands: new CommandsRepo(db),
    work: new WorkRepo(db),
    locations,
    menus: new MenusRepo(db, locations),
    sessions: new SessionsRepo(db),
    operators: new OperatorsRepo(db),
    audit: new AuditRepo(db),
    webhooks: new WebhooksRepo(db),
    webhookDeliveries: new WebhookDeliveriesRepo(db),
    events: new EventLogRepo(db),
    leases: new LeasesRepo(db),
  };
}
