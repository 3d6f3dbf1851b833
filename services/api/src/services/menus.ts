/**
 * Menus (docs/menu.md): a location's menu accepted from its register or an operator, published
 * to many locations at once, read with its ETag, its products snoozed and lifted, and customers'
 * carts priced from it. Menu documents are immutable by id (their hash), so each node keeps the
 * ones it serves: pricing a row reads the location's pointer with the admission read the order
 * makes anyway, and no other command once the document is held.
 */
import type { Queue } from 'bullmq';
import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';
import type { Counter } from 'prom-client';
import {
  countsOf,
  type MenuCounts,
  type MenuDocument,
  menuErrors,
  menuEtag,
  menuIdOf,
  type MenuLimits,
  menuView,
  type PricedMenu,
  type Published,
  priceIndex,
  priceRows,
  snoozedAt,
  unavailableRows,
} from '@pos/shared/domain/menu';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { OrderRow } from '@pos/shared/domain/records';
import { menuOutbox } from '@pos/shared/events/outbox';
import type { Logger } from '@pos/shared/log';
import { addSnoozeEnd, type SnoozeEndJob } from '@pos/shared/queue/snooze-ends';
import {
  type AvailabilityInput,
  type AvailabilityView,
  checkMenuShape,
  type MenuRowInput,
  type MenuView,
} from '@pos/shared/schemas/menu';
import type { Admission, LocationsRepo } from '@pos/shared/store/locations';
import type { MenusRepo } from '@pos/shared/store/menus';
import type { NewWork } from './new-work';

/** What a node holds of a menu it serves. */
interface HeldMenu {
  document: MenuDocument;
  priced: PricedMenu;
}

/** Menus a node holds at once: a chain serves a few, each up to MENU_BODY_LIMIT. */
const HELD_MENUS = 16;

/** What the menu rules read of a location: its menu and its snoozes (the admission read has both). */
export type MenuHolder = Pick<Admission, '_id' | 'menu' | 'snoozes'>;

/** A location's menu as an answer names it. */
type Shown = Published & { id: string };

/** A menu accepted: its id, what it holds, when, and the version each location drew. */
export interface Accepted {
  id: string;
  counts: MenuCounts;
  publishedAt: Date;
  versions: Map<string, number>;
}

/** A menu as answered: its ETag, and its body (built only when a 304 does not answer). */
export interface MenuAnswer {
  etag: string;
  view: () => Promise<MenuView>;
}

/**
 * The FETCH_REMOTE_MENU commands of a publish made at once: enough to overlap
 * their round trips, few enough to leave the pool to others.
 */
const COMMANDS_AT_ONCE = 16;

export interface MenusDeps {
  menus: Pick<MenusRepo, 'store' | 'document' | 'publish' | 'setAvailability'>;
  locations: Pick<LocationsRepo, 'admission' | 'missing'>;
  newWork: Pick<NewWork, 'command'>;
  snoozeEnds: Queue<SnoozeEndJob>;
  /** MENU_MAX_*. */
  limits: MenuLimits;
  /** `pos_menu_carts_total`, `pos_menu_document_reads_total`. */
  metrics: { carts: Counter<'outcome'>; documentReads: Counter };
}

const noMenu = () => new ProblemError(problems.notFound('Location has no menu'));

export class Menus {
  private readonly held = new LRUCache<string, HeldMenu>({ max: HELD_MENUS });

  constructor(private readonly deps: MenusDeps) {}

  /**
   * A menu document checked: its shape, then its rules; every error at once (422 `Invalid menu`),
   * each pointer within the request body (`at`: where the document is in it).
   */
  check(body: unknown, at = ''): MenuDocument {
    const shape = checkMenuShape(body);
    const errors = [...('errors' in shape ? shape.errors : []), ...menuErrors(body, this.deps.limits)];
    if (errors.length > 0)
      throw new ProblemError(problems.invalidMenu(errors.map((error) => ({ ...error, pointer: at + error.pointer }))));
    return (shape as { menu: MenuDocument }).menu;
  }

  /** What the menu rules read of a location (one read); a 404 when there is none. */
  async holder(locationId: string): Promise<MenuHolder> {
    const location = await this.deps.locations.admission(locationId);
    if (!location) throw new ProblemError(problems.notFound('Location does not exist'));
    return location;
  }

  /**
   * A menu to each of `locationIds`, each under its next version; the document is stored once. A
   * location that does not exist refuses them all, before anything is written. `expected`: only
   * while the one location's menu is at that version (an `If-Match`), else a 412.
   */
  async publish(
    locationIds: readonly string[],
    menu: MenuDocument,
    source: 'register' | 'operator',
    log: Logger,
    expected?: number,
  ): Promise<Accepted> {
    const missing = await this.deps.locations.missing(locationIds);
    if (missing.length > 0) throw new ProblemError(problems.unknownLocation(missing[0]!));
    const now = new Date();
    const id = menuIdOf(menu);
    const counts = countsOf(menu);
    await this.deps.menus.store(id, menu, now);
    this.hold(id, menu);
    const versions = await this.deps.menus.publish(
      locationIds,
      { id, source, counts },
      now,
      (after) => menuOutbox({ type: 'menu', version: after.menu!.version, source, counts }, now)(after),
      expected,
    );
    if (expected !== undefined && versions.size < locationIds.length) {
      throw new ProblemError(
        problems.preconditionFailed('Another menu was accepted since the one If-Match names: read it again'),
      );
    }
    if (versions.size < locationIds.length) throw new ProblemError(problems.notFound('Location does not exist'));
    log.info({ menuId: id, locations: versions.size, ...counts, source }, 'menu accepted');
    return { id, counts, publishedAt: now, versions };
  }

  /**
   * A FETCH_REMOTE_MENU command for each location, so its registers fetch the menu an operator
   * published (`idempotencyId`: a retried request finds the ones it made).
   */
  async askToFetch(locationIds: readonly string[], log: Logger, idempotencyId?: string): Promise<void> {
    const limit = pLimit(COMMANDS_AT_ONCE);
    await Promise.all(
      locationIds.map((locationId) =>
        limit(() => this.deps.newWork.command({ locationId, kind: 'FETCH_REMOTE_MENU' }, log, idempotencyId)),
      ),
    );
  }

  /** The location's menu as answered now; 404 when it has none. */
  read(location: MenuHolder): MenuAnswer {
    if (!location.menu) throw noMenu();
    return this.answer(location, location.menu);
  }

  /**
   * A menu just accepted, as answered: the one this request stored (whatever
   * was accepted since), with the snoozes in force.
   */
  async accepted(locationId: string, accepted: Accepted, source: Published['source']): Promise<MenuAnswer> {
    const location = await this.holder(locationId);
    return this.answer(location, {
      id: accepted.id,
      version: accepted.versions.get(locationId)!,
      source,
      publishedAt: accepted.publishedAt,
    });
  }

  private answer(location: MenuHolder, menu: Shown): MenuAnswer {
    const snoozed = snoozedAt(location.snoozes, new Date());
    return {
      etag: menuEtag(menu.version, snoozed),
      view: async () => menuView((await this.menuOf(location._id, menu.id)).document, menu, snoozed),
    };
  }

  /**
   * Snoozes a product of the location's menu (an item or an option), or lifts its snooze; a
   * product not on the menu is a 404, an `until` not in the future a 400. A timed snooze ends by
   * itself: reads see it at once, and a delayed job records its end.
   */
  async setAvailability(
    location: MenuHolder,
    productId: string,
    input: AvailabilityInput,
    log: Logger,
  ): Promise<AvailabilityView> {
    const now = new Date();
    if (!location.menu) throw noMenu();
    const until = input.until === undefined ? undefined : new Date(input.until);
    if (until && until <= now) throw new ProblemError(problems.validation('until must be in the future'));
    if (input.available && (until || input.reason !== undefined))
      throw new ProblemError(problems.validation('until and reason go with available: false'));
    if (!(await this.menuOf(location._id, location.menu.id)).priced.products.has(productId))
      throw new ProblemError(problems.notFound('Product is not on the menu'));
    const snooze = input.available
      ? undefined
      : { ...(until && { until }), ...(input.reason !== undefined && { reason: input.reason }) };
    const view: AvailabilityView = { productId, available: input.available };
    if (until) view.until = until.toISOString();
    if (input.reason !== undefined) view.reason = input.reason;
    const event = menuOutbox({ type: 'menu-availability', ...view, at: now.getTime() }, now);
    const changed = await this.deps.menus.setAvailability(location._id, productId, snooze, now, event);
    if (changed && until)
      await addSnoozeEnd(this.deps.snoozeEnds, { locationId: location._id, productId, until: until.getTime() });
    log.info(
      { locationId: location._id, productId, available: input.available, until: view.until, changed: changed !== null },
      'menu availability set',
    );
    return view;
  }

  /**
   * A cart priced from the location's menu: its rows named and priced, or a 422 `Menu mismatch`
   * listing every bad row. `sellUnavailable`: an operator's counter order may sell a snoozed product.
   */
  async price(location: MenuHolder, rows: readonly MenuRowInput[], sellUnavailable = false): Promise<OrderRow[]> {
    const { priced } = await this.menuOf(location._id, location.menu!.id);
    const result = priceRows(priced, rows, { snoozed: snoozedAt(location.snoozes, new Date()), sellUnavailable });
    this.deps.metrics.carts.inc({ outcome: 'mismatches' in result ? 'refused' : 'priced' });
    if ('mismatches' in result) throw new ProblemError(problems.menuMismatch(result.mismatches));
    return result.rows;
  }

  /**
   * A submission checks availability again: a product snoozed since the rows were priced is a 422.
   * `rows`: read only while something is snoozed.
   */
  async checkAvailable(location: MenuHolder, rows: () => Promise<readonly OrderRow[]>): Promise<void> {
    const snoozed = snoozedAt(location.snoozes, new Date());
    if (snoozed.size === 0) return;
    const mismatches = unavailableRows(await rows(), snoozed);
    if (mismatches.length > 0) throw new ProblemError(problems.menuMismatch(mismatches));
  }

  /** The menu a location points at, from this node's memory, else read once. */
  private async menuOf(locationId: string, id: string): Promise<HeldMenu> {
    const held = this.held.get(id);
    if (held) return held;
    this.deps.metrics.documentReads.inc();
    const document = await this.deps.menus.document(id);
    if (!document) throw new Error(`menu ${id} of location ${locationId} is not stored`);
    return this.hold(id, document);
  }

  private hold(id: string, document: MenuDocument): HeldMenu {
    const held = this.held.get(id) ?? { document, priced: priceIndex(document) };
    this.held.set(id, held);
    return held;
  }
}
