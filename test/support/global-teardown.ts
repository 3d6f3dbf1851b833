import type { ChildServer } from '../../scripts/embedded/child-server';

export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as { __POS_SERVERS__?: ChildServer[] }).__POS_SERVERS__ ?? [];
  for (const server of started.splice(0).reverse()) await server.stop();
}
