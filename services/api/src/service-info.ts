import { buildInfo } from '@pos/shared/build-info';

export interface ServiceInfo {
  name: string;
  version: string;
  commit: string;
}

/** The service's name, and the release and commit this node runs. */
export function readServiceInfo(): ServiceInfo {
  return { name: 'POS ordering service', ...buildInfo() };
}
