import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** Resolves a hostname to every address it has (the shape of `dns.lookup(hostname, { all: true })`). */
export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

export const systemLookupAll: LookupAll = (hostname) => dns.lookup(hostname, { all: true });

/** A webhook destination that resolves to an address customers must not reach (SSRF protection). */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_TERN_ADDRESS_REFUSED';

  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    const target = hostname === address ? address : `${hostname} resolves to ${address}, which`;
    super(`${target} is a private, loopback, link-local or reserved address; ` + 'webhooks to such addresses need TERN_WEBHOOK_ALLOW_PRIVATE=true');
    this.name = 'AddressRefusedError';
  }
}

// Not publicly routable: RFC 6890 special-purpose blocks plus multicast, reserved and broadcast.
const NON_PUBLIC_IPV4_CIDRS: ReadonlyArray<readonly [base: string, prefix: number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];
const NON_PUBLIC_IPV4 = NON_PUBLIC_IPV4_CIDRS.map(([base, prefix]) => [ipv4ToNumber(base), prefix] as const);

/**
 * True when `ip` is a literal address that may be reached from the public internet. Anything else — private,
 * loopback, link-local, multicast, reserved, documentation ranges, or not an IP at all — is false. IPv4-mapped,
 * NAT64 (64:ff9b::/96) and 6to4 (2002::/16) IPv6 addresses are judged on the IPv4 address they carry.
 */
export function isPublicAddress(ip: string): boolean {
  const version = isIP(ip);
  if (version === 4) return isPublicIPv4(ipv4ToNumber(ip));
  if (version === 6) return isPublicIPv6(parseIPv6(ip));
  return false;
}

function isPublicIPv4(n: number): boolean {
  return !NON_PUBLIC_IPV4.some(([base, prefix]) => n >>> (32 - prefix) === base >>> (32 - prefix));
}

function isPublicIPv6(h: readonly number[]): boolean {
  const embeddedV4 = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0;
  const zeroUpTo = (end: number) => h.slice(0, end).every((x) => x === 0);
  if (zeroUpTo(5) && h[5] === 0xffff) return isPublicIPv4(embeddedV4(h[6]!, h[7]!)); // ::ffff:a.b.c.d
  if (h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every((x) => x === 0)) {
    return isPublicIPv4(embeddedV4(h[6]!, h[7]!)); // NAT64 64:ff9b::a.b.c.d
  }
  if (h[0] === 0x2002) return isPublicIPv4(embeddedV4(h[1]!, h[2]!)); // 6to4
  // Only global unicast 2000::/3 is public. This leaves out ::, ::1, fc00::/7, fe80::/10, ff00::/8 and the rest.
  if ((h[0]! & 0xe000) !== 0x2000) return false;
  if (h[0] === 0x2001 && h[1]! < 0x0200) return false; // 2001::/23 IETF protocol assignments, incl. Teredo
  if (h[0] === 0x2001 && h[1] === 0x0db8) return false; // documentation
  if (h[0] === 0x3fff && h[1]! < 0x1000) return false; // documentation (RFC 9637)
  return true;
}

function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

/** The eight 16-bit groups of a valid IPv6 literal (zone id dropped, trailing dotted IPv4 folded in). */
function parseIPv6(ip: string): number[] {
  let text = ip.split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToNumber(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  if (tail === undefined) return groups(head);
  const left = groups(head);
  const right = groups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * Every address of `hostname`, or an `AddressRefusedError` when any of them is not public (unless `allowPrivate`).
 * Refusing on any rather than filtering keeps a half-private name from being reached through its private half.
 */
export async function resolvePublic(hostname: string, allowPrivate: boolean, lookupAll: LookupAll = systemLookupAll): Promise<LookupAddress[]> {
  const addresses = await lookupAll(hostname);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND', hostname });
  }
  if (!allowPrivate) {
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) throw new AddressRefusedError(hostname, refused.address);
  }
  return addresses;
}

/**
 * A `lookup` for `net.connect`/`tls.connect` (undici's `connect.lookup`) that only ever hands the socket addresses
 * `resolvePublic` has vetted, so the connection goes to the address that was checked: a DNS answer cannot change
 * between the check and the connect (DNS rebinding). IP literals never reach a lookup; callers check those
 * themselves with `isPublicAddress`.
 */
export function guardedLookup(allowPrivate: boolean, lookupAll: LookupAll = systemLookupAll): LookupFunction {
  return (hostname, options, callback) => {
    resolvePublic(hostname, allowPrivate, lookupAll).then(
      (addresses) => {
        const family = familyNumber(options.family);
        const usable = family === 0 ? addresses : addresses.filter((entry) => entry.family === family);
        const first = usable[0];
        if (!first) {
          const err = Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' });
          callback(err, []);
        } else if (options.all) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

function familyNumber(family: number | 'IPv4' | 'IPv6' | undefined): number {
  if (family === 'IPv4') return 4;
  if (family === 'IPv6') return 6;
  return family ?? 0;
}
