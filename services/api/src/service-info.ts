import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface ServiceInfo {
  name: string;
  version: string;
}

/** The service's name and the API package's version (its package.json sits beside src/ and dist/ alike). */
export function readServiceInfo(): ServiceInfo {
  const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return { name: 'POS ordering service', version: manifest.version };
}
