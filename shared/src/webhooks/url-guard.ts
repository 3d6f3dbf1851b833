/**
 * The SSRF guard of webhook endpoints: http(s) only, and a host that resolves to global unicast
 * addresses only: no loopback, private, link-local, shared (CGNAT), unspecified, multicast,
 * reserved or cloud-metadata address, nor an IPv6 address that carries one of those (IPv4-mapped,
 * -translated, -compatible, NAT64, 6to4, Teredo). Checked at creation and again at each delivery,
 * which then connects to the address it checked (a name that resolves elsewhere the second time,
 * DNS rebinding, cannot slip through). The ranges are ipaddr.js's (its IANA special-purpose
 * registries); only what those registries do not name is written here.
 *
 * WEBHOOK_ALLOW_PRIVATE lets a receiver on a private network through; never a cloud's metadata
 * or platform address, where no receiver lives (a blind POST at the instance's credentials).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Azure's wire server and Alibaba's metadata service sit on public-looking addresses. */
const METADATA_ADDRESSES = new Set(['168.63.129.16', '100.100.100.200']);
/**
 * IPv4 link-local (169.254.169.254 and the other platform services: EC2,
 * ECS, GCP, OpenStack); AWS's IPv6 platform prefix.
 */
const PLATFORM_V4 = ipaddr.parseCIDR('169.254.0.0/16');
const PLATFORM_V6 = ipaddr.parseCIDR('fd00:ec2::/32');

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/**
 * The IPv4 addresses an IPv6 address carries, by its range; undefined when it carries none. A
 * Teredo address carries two: its server's, and its client's (inverted, RFC 4380).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped': // ::ffff:0:0/96
    case 'rfc6145': // ::ffff:0:0:0/96, IPv4-translated
      return [ipv4Of(p[6]!, p[7]!)];
    case '6to4': // 2002::/16: the IPv4 address follows the prefix
      return [ipv4Of(p[1]!, p[2]!)];
    case 'teredo': // 2001::/32
      return [ipv4Of(p[2]!, p[3]!), ipv4Of(~p[6]! & 0xffff, ~p[7]! & 0xffff)];
    default:
      break;
  }
  // NAT64's well-known prefix (RFC 6052), and the deprecated IPv4-compatible ::/96 (:: and ::1 among them).
  if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96) || address.match(ipaddr.IPv6.parse('::'), 96))
    return [ipv4Of(p[6]!, p[7]!)];
  return undefined;
}

const platformIPv4 = (address: ipaddr.IPv4): boolean =>
  address.match(PLATFORM_V4) || METADATA_ADDRESSES.has(address.toString());
const forbiddenIPv4 = (address: ipaddr.IPv4): boolean => address.range() !== 'unicast' || platformIPv4(address);

/**
 * Whether an address is a cloud's metadata or platform service (or an IPv6
 * address carrying one): refused whatever the flag.
 */
export function isPlatformAddress(address: string): boolean {
  if (!ipaddr.isValid(address) || isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return platformIPv4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  return v6.match(PLATFORM_V6) || (embeddedIPv4(v6)?.some(platformIPv4) ?? false);
}

/**
 * Whether an address is one a webhook may not reach: anything but a global unicast address. An
 * IPv6 address that carries an IPv4 address is judged by that address; NAT64's local-use prefix
 * (64:ff9b:1::/48, RFC 8215) is not globally reachable, whatever it carries.
 */
export function isForbiddenAddress(address: string): boolean {
  if (!ipaddr.isValid(address) || isIP(address) === 0) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return forbiddenIPv4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  if (v6.match(ipaddr.IPv6.parse('64:ff9b:1::'), 48)) return true;
  const carried = embeddedIPv4(v6);
  if (carried) return carried.some(forbiddenIPv4);
  return v6.range() !== 'unicast';
}

/** Said by each role that starts with the guard relaxed, so that no deployment runs so unknowingly. */
export const RELAXED_GUARD =
  'WEBHOOK_ALLOW_PRIVATE=1: webhook endpoints may be on loopback and private ' +
  'addresses (cloud metadata and platform addresses stay refused)';

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
    addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new UrlRefused(`url's host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new UrlRefused(`url's host ${host} does not resolve`);
  const platform = addresses.find((a) => isPlatformAddress(a.address));
  if (platform)
    throw new UrlRefused(
      `url's host resolves to ${platform.address}, a cloud metadata or platform address: no ` +
        'receiver lives there (refused even with WEBHOOK_ALLOW_PRIVATE=1)',
    );
  if (!allowPrivate) {
    const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
    if (forbidden) {
      throw new UrlRefused(
        `url's host resolves to ${forbidden.address}, a loopback, private, link-local or metadata address; a ` +
          'receiver on a private network needs WEBHOOK_ALLOW_PRIVATE=1 on every API node and worker',
      );
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
