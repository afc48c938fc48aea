import { describe, expect, it } from 'vitest';
import { embeddedIpv4, ipv6Bytes, refusedAddress } from '../../src/api/artwork-addresses.js';
import { artworkAgent, probeArtwork } from '../../src/api/artwork-probe.js';

/**
 * IPv6 addresses that carry an IPv4 address (translation and tunnel prefixes) are judged by
 * the IPv4 address they carry: a private, loopback or metadata one is refused, a public one
 * may pass. Site-local addresses are refused like unique-local ones.
 */

describe('artwork addresses carrying an IPv4 address', () => {
  // [address, refused?, what it is]
  const TABLE: readonly [string, boolean, string][] = [
    ['64:ff9b::10.0.0.1', true, 'NAT64 well-known prefix, private'],
    ['64:ff9b::a9fe:a9fe', true, 'NAT64, the metadata address 169.254.169.254 in hex'],
    ['64:ff9b::127.0.0.1', true, 'NAT64, loopback'],
    ['64:ff9b::8.8.8.8', false, 'NAT64, public'],
    ['64:ff9b:1:a9fe:a9:fe00::', true, 'NAT64 local-use /48: 169.254.169.254 at the /48 place'],
    ['64:ff9b:1::a00:1', true, 'NAT64 local-use, 10.0.0.1 at the /96 place'],
    ['64:ff9b:1:0:8:808:800::', true, 'NAT64 local-use, 8.8.8.8 at the /64 place but 0.0.8.8 at the /48 one'],
    ['64:ff9b:1:808:8:808:808:808', false, 'NAT64 local-use, 8.8.8.8 at every place'],
    ['2002:a9fe:a9fe::1', true, '6to4 of 169.254.169.254'],
    ['2002:c0a8:101::', true, '6to4 of 192.168.1.1'],
    ['2002:7f00:1::', true, '6to4 of 127.0.0.1'],
    ['2002:808:808::1', false, '6to4 of 8.8.8.8'],
    ['::10.0.0.1', true, 'IPv4-compatible, private'],
    ['::a9fe:a9fe', true, 'IPv4-compatible, metadata'],
    ['::127.0.0.1', true, 'IPv4-compatible, loopback'],
    ['::0.0.0.2', true, 'IPv4-compatible, 0.0.0.0/8'],
    ['::8.8.8.8', false, 'IPv4-compatible, public'],
    ['::ffff:0:10.0.0.1', true, 'SIIT, private'],
    ['::ffff:0:a9fe:a9fe', true, 'SIIT, metadata'],
    ['::ffff:0:8.8.8.8', false, 'SIIT, public'],
    ['::ffff:10.0.0.1', true, 'IPv4-mapped, private'],
    ['::ffff:a9fe:a9fe', true, 'IPv4-mapped in hex, metadata'],
    ['::ffff:8.8.8.8', false, 'IPv4-mapped, public'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', true, 'Teredo whose client is 10.0.0.1 (stored inverted)'],
    ['fec0::1', true, 'site-local'],
    ['fed0:1::2', true, 'site-local'],
    ['fd00:ec2::254', true, 'unique-local (an IPv6 metadata address)'],
    ['::1', true, 'loopback'],
    ['::', true, 'unspecified'],
    ['2606:2800:220:1:248:1893:25c8:1946', false, 'public IPv6'],
    ['169.254.169.254', true, 'metadata'],
    ['192.0.0.170', true, 'IETF protocol assignments'],
    ['93.184.216.34', false, 'public IPv4'],
  ];

  it.each(TABLE)('%s refused: %s (%s)', (address, refused) => {
    expect(refusedAddress(address, {})).toBe(refused);
    expect(refusedAddress(`[${address}]`, {})).toBe(refused);
  });

  it('reads every IPv6 spelling, a trailing dotted quad included', () => {
    expect(Array.from(ipv6Bytes('::ffff:10.0.0.1'))).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 0, 0, 1]);
    expect(Array.from(ipv6Bytes('64:ff9b::'))).toEqual([0, 0x64, 0xff, 0x9b, ...new Array(12).fill(0)]);
    expect(embeddedIpv4(ipv6Bytes('2002:c0a8:101::'))).toEqual(['192.168.1.1']);
    expect(embeddedIpv4(ipv6Bytes('2606:2800:220:1:248:1893:25c8:1946'))).toEqual([]);
  });

  it('a loopback printer (the sandbox) allows loopback embedded as well; private stays refused', () => {
    expect(refusedAddress('64:ff9b::127.0.0.1', { allowLoopback: true })).toBe(false);
    expect(refusedAddress('2002:a00:1::', { allowLoopback: true })).toBe(true);
    expect(refusedAddress('2002:a00:1::', { allowPrivate: true })).toBe(false);
  });

  it('a link written with such an address is refused before any connection', async () => {
    for (const host of [
      '[64:ff9b::a9fe:a9fe]',
      '[2002:a9fe:a9fe::]',
      '[::a9fe:a9fe]',
      '[::ffff:0:a9fe:a9fe]',
      '[fec0::1]',
    ]) {
      const result = await probeArtwork(`https://${host}/latest/meta-data/x.png?sig=1`, artworkAgent({}), {});
      expect(result).toMatchObject({ ok: false, code: 'artwork.private-address' });
      expect(result.ok ? '' : result.message).not.toContain('sig=1');
    }
  });
});
