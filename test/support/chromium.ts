/**
 * Debian's Chromium (installed by `scripts/setup.sh --test`) driven by playwright-core, for the
 * browser tests. A missing Chromium fails a test; it does not skip.
 */
import { Browser, chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** No sandbox (root in CI), and nothing that reaches for the network on its own: this machine has none. */
const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
}
