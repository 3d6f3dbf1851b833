/** Locations, their presence and pause (the admin API). One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { locationSchema, locationUpdateSchema, pauseSchema } from '../../schemas/requests';
import { locationListQuerySchema } from '../../schemas/queries';
import { locationViewSchema, presenceSchema } from '../../schemas/responses';
import { exampleProblems as ex, examples } from '../examples';
import { arrayOf, defineOperations, json, P, paged } from './spec';

export const LOCATION_OPERATIONS = defineOperations({
  listLocations: {
    method: 'get',
    path: '/admin/v1/locations',
    tag: 'Admin',
    summary: 'List locations',
    description: `${paged} In creation order (by id); \`?online=false\` lists the dark ones (presence as last announced).`,
    access: 'admin',
    criticality: 'sheddable',
    role: 'viewer',
    bound: 'locations',
    boundNote: 'lists its own locations only',
    traits: ['paged'],
    query: locationListQuerySchema,
    ok: {
      status: 200,
      description: 'A page of locations',
      content: json(arrayOf(locationViewSchema), [examples.location]),
    },
  },
  createLocation: {
    method: 'post',
    path: '/admin/v1/locations',
    tag: 'Admin',
    summary: 'Create a location',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'chain',
    traits: ['jsonBody'],
    body: { schema: locationSchema, example: { name: 'Main Street', failureThreshold: 3 } },
    ok: { status: 201, description: 'The location', content: json(locationViewSchema, examples.location) },
  },
  getLocation: {
    method: 'get',
    path: '/admin/v1/locations/{id}',
    tag: 'Admin',
    summary: 'Read a location',
    access: 'admin',
    criticality: 'normal',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    ok: { status: 200, description: 'The location', content: json(locationViewSchema, examples.location) },
    problems: [ex.locationNotFound],
  },
  updateLocation: {
    method: 'patch',
    path: '/admin/v1/locations/{id}',
    tag: 'Admin',
    summary: 'Change a location’s name, failure threshold or order deadline',
    description:
      'A new threshold holds from the next failure report on, on every worker, without ' +
      'a restart; orders already FAILED stay FAILED until recovered. ' +
      'A new `orderDeadline` (over `ORDER_DEADLINE`; `0`: none) holds from the next placement on.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: locationUpdateSchema, example: { failureThreshold: 5 } },
    ok: {
      status: 200,
      description: 'The location as changed',
      content: json(locationViewSchema, { ...examples.location, failureThreshold: 5 }),
    },
    problems: [ex.locationNotFound, problems.validation('body must have at least 1 field(s)')],
  },
  getLocationPresence: {
    method: 'get',
    path: '/admin/v1/locations/{id}/presence',
    tag: 'Admin',
    summary: "A location's presence: online, since when, and the registers seen",
    description:
      'Online while a register (SERVICE) session holds an event stream on any ' +
      'node, or made a request within `PRESENCE_WINDOW`. ' +
      "Read from Redis as the API nodes wrote it (each at most once per session per quarter window); `since` is the announced state's start.",
    access: 'admin',
    criticality: 'normal',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    ok: { status: 200, description: 'The presence', content: json(presenceSchema, examples.presence) },
    problems: [ex.locationNotFound],
  },
  pauseLocation: {
    method: 'put',
    path: '/admin/v1/locations/{id}/pause',
    tag: 'Admin',
    summary: 'Pause a location: customers are refused until `until` (or until resumed)',
    description:
      "Customers' creates and submits answer 409 `Location not accepting orders` while it " +
      'holds; registers, operators and counter orders work as before. ' +
      'A pause with `until` ends by itself at that time. Announced as a `location` event.',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: pauseSchema, example: { until: '2026-11-21T09:00:00.000Z', reason: 'kitchen closed' } },
    ok: {
      status: 200,
      description: 'The location, paused',
      content: json(locationViewSchema, examples.pausedLocation),
    },
    problems: [ex.locationNotFound, problems.validation('until must be in the future')],
  },
  resumeLocation: {
    method: 'delete',
    path: '/admin/v1/locations/{id}/pause',
    tag: 'Admin',
    summary: 'Resume a paused location',
    description: 'Customers are accepted again. Resuming a location that is not paused changes nothing.',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    params: [P.locationId],
    ok: { status: 200, description: 'The location', content: json(locationViewSchema, examples.location) },
    problems: [ex.locationNotFound],
  },
});
