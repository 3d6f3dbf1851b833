import { Gauge, Registry } from 'prom-client';
import { scrapeRead } from '@pos/api/metrics/scrape-read';

/** Two gauges sharing one read, as the readiness and presence metrics do; counts the reads. */
function registryWithSharedRead() {
  let reads = 0;
  const read = scrapeRead(async () => {
    reads += 1;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return reads;
  });
  const registry = new Registry();
  for (const name of ['first', 'second']) {
    new Gauge({
      name,
      help: name,
      registers: [registry],
      async collect() {
        this.set(await read());
      },
    });
  }
  return { registry, reads: () => reads };
}

describe('scrapeRead', () => {
  it('reads once per scrape for every metric sharing it', async () => {
    const { registry, reads } = registryWithSharedRead();
    const text = await registry.metrics();
    expect(reads()).toBe(1);
    expect(text).toContain('first 1');
    expect(text).toContain('second 1');
  });

  it('reads anew for a scrape that begins as soon as the last one answered', async () => {
    const { registry, reads } = registryWithSharedRead();
    await registry.metrics();
    // No turn of the event loop between the two: a scrape arriving on a busy node looks like this.
    const text = await registry.metrics();
    expect(reads()).toBe(2);
    expect(text).toContain('first 2');
    expect(text).toContain('second 2');
  });

  it('reads anew after a read that failed', async () => {
    let calls = 0;
    const read = scrapeRead(async () => {
      calls += 1;
      if (calls === 1) throw new Error('down');
      return calls;
    });
    await expect(read()).rejects.toThrow('down');
    await expect(read()).resolves.toBe(2);
  });
});
