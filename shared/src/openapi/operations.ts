/**
 * Every operation of the HTTP surface, one entry each, in the parts of operations/ (one per
 * router of the API): the one declaration of each operation's method, path, access, role,
 * criticality and traits, from which the OpenAPI document (document.ts) and the API's routes
 * (services/api/src/routes/mount.ts) are both built.
 */
import { BOARD_OPERATIONS } from './operations/board';
import { CUSTOMER_OPERATIONS } from './operations/customer';
import { DOCUMENTATION_OPERATIONS } from './operations/documentation';
import { EVENT_OPERATIONS } from './operations/events';
import { HEALTH_OPERATIONS } from './operations/health';
import { LOCATION_WORK_OPERATIONS } from './operations/location-work';
import { LOCATION_OPERATIONS } from './operations/locations';
import { ADMIN_MENU_OPERATIONS, MENU_OPERATIONS } from './operations/menus';
import { MONITORING_OPERATIONS } from './operations/monitoring';
import { OPERATOR_OPERATIONS } from './operations/operators';
import { REGISTER_OPERATIONS } from './operations/register';
import { SESSION_OPERATIONS } from './operations/sessions';
import type { OperationInput, OperationSpec } from './operations/spec';
import { WEBHOOK_OPERATIONS } from './operations/webhooks';

export * from './operations/spec';
export {
  ADMIN_MENU_OPERATIONS,
  BOARD_OPERATIONS,
  CUSTOMER_OPERATIONS,
  DOCUMENTATION_OPERATIONS,
  EVENT_OPERATIONS,
  HEALTH_OPERATIONS,
  LOCATION_OPERATIONS,
  LOCATION_WORK_OPERATIONS,
  MENU_OPERATIONS,
  MONITORING_OPERATIONS,
  OPERATOR_OPERATIONS,
  REGISTER_OPERATIONS,
  SESSION_OPERATIONS,
  WEBHOOK_OPERATIONS,
};

/** The parts, in the order the document lists them. */
const PARTS = {
  ...REGISTER_OPERATIONS,
  ...CUSTOMER_OPERATIONS,
  ...MENU_OPERATIONS,
  ...LOCATION_OPERATIONS,
  ...ADMIN_MENU_OPERATIONS,
  ...SESSION_OPERATIONS,
  ...WEBHOOK_OPERATIONS,
  ...EVENT_OPERATIONS,
  ...LOCATION_WORK_OPERATIONS,
  ...BOARD_OPERATIONS,
  ...HEALTH_OPERATIONS,
  ...MONITORING_OPERATIONS,
  ...OPERATOR_OPERATIONS,
  ...DOCUMENTATION_OPERATIONS,
};

export type OperationId = keyof typeof PARTS;

export const OPERATIONS: OperationSpec[] = Object.entries(PARTS as Record<string, OperationInput>).map(
  ([id, spec]) => ({ id, ...spec }),
);

/** The entry of an operation id. */
export function operation(id: OperationId): OperationSpec {
  return { id, ...(PARTS as Record<string, OperationInput>)[id]! };
}
