/**
 * The SSRF guard of webhook endpoints: http(s) only, and a host that resolves to no loopback,
 * private, link-local, shared (CGNAT), unspecified, multicast or cloud-metadata address. Checked at
 * creation and again at each delivery, which then connects to the address it checked (a name
 * that resolves elsewhere the second time, DNS rebinding, cannot slip through).
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, and the metadata service of AWS, GCP and Azure (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3], // multicast and reserved, up to the broadcast address
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local, including AWS's metadata address fd00:ec2::254
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(network, prefix, 'ipv6');
// Azure's wire server and Alibaba's metadata service sit on public-looking addresses.
blocked.addAddress('168.63.129.16', 'ipv4');
blocked.addAddress('100.100.100.200', 'ipv4');

/** Whether an address is one a webhook may not reach (an IPv4-mapped IPv6 address counts as its IPv4 address). */
export function isForbiddenAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class UrlRefused extends Error {}

export interface CheckedUrl {
  url: URL;
  /** The address to connect to: the one the check resolved. */
  address: string;
  family: 4 | 6;
}

/** Resolves the URL's host and checks every address it has; throws UrlRefused saying why. */
export async function checkWebhookUrl(text: string, allowPrivate: boolean): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UrlRefused('url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefused('url must be http or https');
  if (url.username || url.password) throw new UrlRefused('url must not carry credentials');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new UrlRefused(`url's host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new UrlRefused(`url's host ${host} does not resolve`);
  if (!allowPrivate) {
    const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
    if (forbidden) throw new UrlRefused(`url's host resolves to ${forbidden.address}, a loopback, private, link-local or metadata address`);
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
