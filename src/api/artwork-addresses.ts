import { BlockList, isIP } from 'node:net';

/**
 * Which addresses an artwork link may lead to. The printer fetches from the internet, so a
 * private, loopback, link-local, site-local or otherwise local address is refused — also when
 * it hides in an IPv6 address that carries an IPv4 one (IPv4-mapped and -compatible, SIIT,
 * NAT64, 6to4, Teredo): such an address is judged by every IPv4 address it embeds.
 */

export interface AddressRules {
  /** Allow loopback addresses (the sandbox, test rigs). */
  allowLoopback?: boolean;
  /** Allow private and link-local addresses too (a test rig whose printer is on the same network). */
  allowPrivate?: boolean;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Addresses the printer on the internet cannot reach: private, link-local, site-local, shared, unspecified, multicast. */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/** Whether the printer could not reach `address` (an IPv4 or IPv6 literal), given what the rules allow. */
export function refusedAddress(address: string, rules: AddressRules): boolean {
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(plain);
  if (family === 4) return refusedOne(plain, 'ipv4', rules);
  if (family !== 6) return true;
  const bytes = ipv6Bytes(plain);
  const embedded = embeddedIpv4(bytes);
  if (embedded.some((v4) => refusedOne(v4, 'ipv4', rules))) return true;
  // An IPv4-mapped or -compatible address is the IPv4 address it carries, nothing else.
  if (embedded.length > 0 && isIpv4InIpv6(bytes)) return false;
  return refusedOne(plain, 'ipv6', rules);
}

function refusedOne(ip: string, family: 'ipv4' | 'ipv6', rules: AddressRules): boolean {
  if (LOOPBACK.check(ip, family)) return !rules.allowLoopback && !rules.allowPrivate;
  return PRIVATE.check(ip, family) && !rules.allowPrivate;
}

/** The 16 bytes of a valid IPv6 literal (isIP said 6), a trailing dotted quad included. */
export function ipv6Bytes(text: string): Uint8Array {
  let s = text;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  const tail = quad ? quad.slice(1).map(Number) : [];
  if (quad) s = `${s.slice(0, quad.index)}0:0`;
  const [head = '', rest] = s.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const front = groups(head);
  const back = rest === undefined ? [] : groups(rest);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

const dotted = (b: ArrayLike<number>): string => Array.from(b).join('.');

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((v, i) => bytes[i] === v);
}

/** ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT) and ::a.b.c.d (compatible; not :: or ::1). */
function isIpv4InIpv6(b: Uint8Array): boolean {
  const zeros = (n: number) => new Array<number>(n).fill(0);
  return (
    startsWith(b, [...zeros(10), 0xff, 0xff]) ||
    startsWith(b, [...zeros(8), 0xff, 0xff, 0, 0]) ||
    (startsWith(b, zeros(12)) && !(startsWith(b, zeros(15)) && (b[15] ?? 0) <= 1))
  );
}

/** RFC 6052's places of an IPv4 address under a NAT64 prefix of each length (byte 8 is always skipped). */
const NAT64_PLACES: readonly (readonly number[])[] = [
  [6, 7, 9, 10],
  [7, 9, 10, 11],
  [9, 10, 11, 12],
  [12, 13, 14, 15],
];

/**
 * Every IPv4 address an IPv6 address carries, by the translation or tunnel that would reach
 * it: mapped, SIIT and compatible (the last four bytes); NAT64's well-known prefix
 * 64:ff9b::/96 and its local-use 64:ff9b:1::/48 (where the operator's prefix length is not
 * known, so every place RFC 6052 allows is judged); 6to4 2002::/16 (bytes 2–5); Teredo
 * 2001::/32 (its server, and its client stored inverted).
 */
export function embeddedIpv4(b: Uint8Array): string[] {
  const last = dotted(b.subarray(12, 16));
  if (isIpv4InIpv6(b)) return [last];
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return [last];
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 1])) return NAT64_PLACES.map((at) => dotted(at.map((i) => b[i] ?? 0)));
  if (startsWith(b, [0x20, 0x02])) return [dotted(b.subarray(2, 6))];
  if (startsWith(b, [0x20, 0x01, 0, 0]))
    return [dotted(b.subarray(4, 8)), dotted(Array.from(b.subarray(12, 16), (x) => x ^ 0xff))];
  return [];
}

/** The refusal's words, naming the address and the setting that allows it. */
export function refusalText(address: string): string {
  return `resolves to ${address}, a private, loopback or link-local address the printer cannot reach (setting artworkAllowPrivate)`;
}
