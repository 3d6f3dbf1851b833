/** Spellings of the operator paths that the register-facing door must not serve, and how to tell. */

/** Tell-tales of an operator answer; none may appear on the public door. */
const OPERATOR_CONTENT = ['pos_http_requests_total', 'process_cpu', 'POS order work', '"apiKey"', '"queues"'];

/** GET spellings of /metrics and Bull Board that a lenient router or proxy might take for them. */
export const OPERATOR_GETS = [
  '/metrics',
  '/METRICS',
  '/Metrics',
  '/metrics/',
  '/metrics;x',
  '/%6detrics',
  '/%6Detrics',
  '//metrics',
  '/./metrics',
  '/api/../metrics',
  '/api/v1/%2e%2e/%2e%2e/metrics',
  '/admin/queues',
  '/ADMIN/QUEUES',
  '/Admin/queues/',
  '/%61dmin/queues',
  '/admin%2fqueues',
  '/admin/queues/api/queues',
];

/** POST spellings of the key-issuing admin route, for a location id. */
export const keyIssuingPaths = (id: string) => [
  `/admin/v1/locations/${id}/service-sessions`,
  `/Admin/v1/locations/${id}/service-sessions`,
  `/ADMIN/V1/LOCATIONS/${id}/SERVICE-SESSIONS`,
  `/admin/V1/locations/${id}/service-sessions`,
  `/%61dmin/v1/locations/${id}/service-sessions`,
  `/admin%2Fv1/locations/${id}/service-sessions`,
  `/admin/v1/./locations/${id}/service-sessions`,
  `//admin/v1/locations/${id}/service-sessions`,
  `/api/v1/../../admin/v1/locations/${id}/service-sessions`,
  `/api/v1/%2e%2e/%2e%2e/admin/v1/locations/${id}/service-sessions`,
];

export function expectNoOperatorContent(text: string, what: string): void {
  for (const telltale of OPERATOR_CONTENT)
    expect(`${what}: ${text.includes(telltale) ? telltale : 'none'}`).toBe(`${what}: none`);
}
