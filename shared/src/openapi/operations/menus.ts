/**
 * The menu (docs/menu.md): the register's and the customer app's side, and the
 * operators'. One entry per operation, by its id (spec.ts).
 */
import { problems } from '../../domain/problem';
import {
  availabilitySchema,
  availabilityViewSchema,
  menuDocumentSchema,
  menuPublishSchema,
  menuPublishViewSchema,
  menuViewSchema,
} from '../../schemas/menu';
import { exampleProblems as ex, examples } from '../examples';
import { defineOperations, json, P, type ParamSpec } from './spec';

/** A cart's rows by its location's rules (docs/menu.md): the customer's and the counter's orders. */
export const CART_RULES =
  'At a location with a menu, a row names a product (`productId`, `quantity`, `notes`, ' +
  '`modifiers`) and the service sets its `name` and `unitPrice` from the menu; ' +
  "a `unitPrice` sent is the app's expectation, and one that differs is a mismatch. A cart " +
  'the menu does not allow is a 422 `Menu mismatch` listing every bad row. ' +
  'At a location without one, a row carries its own `name` and `unitPrice`.';

const productIdParam: ParamSpec = {
  name: 'productId',
  in: 'path',
  description: 'The product: an item or an option of the menu',
  schema: { type: 'string' },
  example: 'sku-burger',
};

const ifNoneMatch: ParamSpec = {
  name: 'If-None-Match',
  in: 'header',
  description: 'An ETag of an earlier answer: a 304 while the menu, as answered now, is the same',
  schema: { type: 'string' },
  required: false,
  example: '"3"',
};

const ifMatch: ParamSpec = {
  name: 'If-Match',
  in: 'header',
  description:
    'The ETag of the menu the change was made from: a 412 when another menu was accepted since (snoozes do not count)',
  schema: { type: 'string' },
  required: false,
  example: '"3"',
};

const NOT_MODIFIED = 'The menu is as the `If-None-Match` ETag names it (no body)';
const MENU_PROBLEMS = [
  problems.invalidMenu([{ pointer: '/items/1/productId', detail: 'duplicates the productId at /items/0/productId' }]),
];
const NO_MENU = problems.notFound('Location has no menu');
const AVAILABILITY_PROBLEMS = [
  NO_MENU,
  problems.notFound('Product is not on the menu'),
  problems.validation('until must be in the future'),
];
const menuOk = (description: string) => ({
  status: 200 as const,
  description,
  headers: ['ETag' as const],
  content: json(menuViewSchema, examples.menu),
});
const availabilityBody = {
  schema: availabilitySchema,
  example: { available: false, until: '2026-11-21T18:00:00.000Z', reason: 'sold out' },
};
const availabilityOk = {
  status: 200 as const,
  description: 'The availability as set',
  content: json(availabilityViewSchema, {
    productId: 'sku-burger',
    available: false,
    until: '2026-11-21T18:00:00.000Z',
    reason: 'sold out',
  }),
};

/** The register's and the customer app's (the public door). */
export const MENU_OPERATIONS = defineOperations({
  exportMenu: {
    method: 'put',
    path: '{base}/menu',
    tag: 'Register',
    summary: "Export the location's menu (its main data)",
    description:
      "The register's answer to `EXPORT_DATA`, or sent at any time: replaces " +
      "the location's menu whole, under its next version. " +
      'Snoozes are kept. An invalid menu is a 422 `Invalid menu` listing every error by ' +
      'JSON pointer, and changes nothing. Up to `MENU_BODY_LIMIT` (4 MiB).',
    access: 'register',
    criticality: 'normal',
    traits: ['jsonBody'],
    upload: 'menu',
    body: { schema: menuDocumentSchema, example: examples.menuDocument },
    ok: menuOk('The menu as stored'),
    problems: MENU_PROBLEMS,
  },
  getMenu: {
    method: 'get',
    path: '{base}/menu',
    tag: 'Register',
    summary: "Read the location's menu (what `FETCH_REMOTE_MENU` asks for)",
    access: 'register',
    criticality: 'normal',
    params: [ifNoneMatch],
    ok: menuOk('The menu, with each product’s availability now'),
    notModified: NOT_MODIFIED,
    problems: [NO_MENU],
  },
  setMenuAvailability: {
    method: 'put',
    path: '{base}/menu/items/{productId}/availability',
    tag: 'Register',
    summary: 'Snooze (86) a product, or lift its snooze',
    description:
      '`available: false` snoozes it, until `until` (a future instant) or until lifted; ' +
      '`available: true` lifts it. Customers cannot order it meanwhile.',
    access: 'register',
    criticality: 'normal',
    traits: ['jsonBody'],
    params: [productIdParam],
    body: availabilityBody,
    ok: availabilityOk,
    problems: AVAILABILITY_PROBLEMS,
  },
  getCustomerMenu: {
    method: 'get',
    path: '{base}/customer/menu',
    tag: 'Customer app',
    summary: "Read the caller's location's menu",
    access: 'customer',
    criticality: 'normal',
    params: [ifNoneMatch],
    ok: menuOk('The menu, with each product’s availability now'),
    notModified: NOT_MODIFIED,
    problems: [NO_MENU],
  },
});

/** The operators' (the admin door). */
export const ADMIN_MENU_OPERATIONS = defineOperations({
  getLocationMenu: {
    method: 'get',
    path: '/admin/v1/locations/{id}/menu',
    tag: 'Admin',
    summary: "Read a location's menu",
    access: 'admin',
    criticality: 'normal',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId, ifNoneMatch],
    ok: menuOk('The menu, with each product’s availability now'),
    notModified: NOT_MODIFIED,
    problems: [ex.locationNotFound, NO_MENU],
  },
  putLocationMenu: {
    method: 'put',
    path: '/admin/v1/locations/{id}/menu',
    tag: 'Admin',
    summary: "Replace a location's menu",
    description:
      "As a register's export, with `source: operator`; also creates a `FETCH_REMOTE_MENU` command, so the location's registers fetch it. " +
      'With `If-Match`, only while the menu is still the version it names (a 412 otherwise).',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    upload: 'menu',
    params: [P.locationId, ifMatch],
    body: { schema: menuDocumentSchema, example: examples.menuDocument },
    ok: menuOk('The menu as stored'),
    problems: [
      ex.locationNotFound,
      ...MENU_PROBLEMS,
      problems.preconditionFailed('Another menu was accepted since the one If-Match names: read it again'),
    ],
  },
  setLocationMenuAvailability: {
    method: 'put',
    path: '/admin/v1/locations/{id}/menu/items/{productId}/availability',
    tag: 'Admin',
    summary: 'Snooze (86) a product of a location, or lift its snooze',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId, productIdParam],
    body: availabilityBody,
    ok: availabilityOk,
    problems: [ex.locationNotFound, ...AVAILABILITY_PROBLEMS],
  },
  publishMenu: {
    method: 'post',
    path: '/admin/v1/menus/publish',
    tag: 'Admin',
    summary: 'Publish one menu to many locations',
    description:
      'Up to 1,000 locations in one call, each under its next version, each with ' +
      'a `FETCH_REMOTE_MENU` command; the menu is stored once. ' +
      'An invalid menu (422) or a location that does not exist (404) refuses the whole call, and nothing is published.',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    boundNote: 'every location of `locationIds` must be its own (a 403 otherwise)',
    traits: ['jsonBody'],
    upload: 'menu',
    body: { schema: menuPublishSchema, example: { locationIds: ['loc_01', 'loc_02'], menu: examples.menuDocument } },
    ok: {
      status: 200,
      description: 'The version each location now serves',
      content: json(menuPublishViewSchema, { results: [{ locationId: 'loc_01', version: 4 }] }),
    },
    problems: [problems.unknownLocation('loc_99'), ...MENU_PROBLEMS],
  },
});
