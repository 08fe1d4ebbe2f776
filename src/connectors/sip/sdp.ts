import { type G711Codec, PAYLOAD_TYPES } from './g711.ts';

/** Our offer: one audio stream, the codecs in order of preference; sendrecv, which every trunk takes (what comes back is not used). */
export function sdpOffer(o: { address: string; port: number; codecs: readonly G711Codec[]; sessionId: number }): string {
  const pts = o.codecs.map((c) => PAYLOAD_TYPES[c]);
  return [
    'v=0',
    `o=tern ${o.sessionId} ${o.sessionId} IN IP4 ${o.address}`,
    's=Tern voice message',
    `c=IN IP4 ${o.address}`,
    't=0 0',
    `m=audio ${o.port} RTP/AVP ${pts.join(' ')}`,
    ...o.codecs.map((c) => `a=rtpmap:${PAYLOAD_TYPES[c]} ${c}/8000`),
    'a=ptime:20',
    'a=sendrecv',
    '',
  ].join('\r\n');
}

export interface SdpAnswer {
  address: string;
  port: number;
  codec: G711Codec;
}

/**
 * Where to send the audio and in which codec, from the callee's answer: its connection address (media level first),
 * its audio port, and the first of its payload types that is one of ours. Null when the answer takes none of them
 * or is not SDP we can use (rejected stream, port 0, IPv6 only).
 */
export function readSdpAnswer(sdp: string, offered: readonly G711Codec[]): SdpAnswer | null {
  const lines = sdp.split(/\r?\n/).map((l) => l.trim());
  let sessionAddress: string | null = null;
  let mediaAddress: string | null = null;
  let media: { port: number; pts: number[] } | null = null;
  const rtpmap = new Map<number, string>();
  let inAudio = false;
  for (const line of lines) {
    if (line.startsWith('m=')) {
      inAudio = false;
      const m = /^m=audio (\d+)(?:\/\d+)? RTP\/AVP((?: \d+)+)$/.exec(line);
      if (m && !media) {
        media = { port: Number(m[1]), pts: m[2]!.trim().split(' ').map(Number) };
        inAudio = true;
      }
    } else if (line.startsWith('c=')) {
      const c = /^c=IN IP4 ([0-9.]+)/.exec(line);
      if (c) {
        if (inAudio) mediaAddress = c[1]!;
        else if (!media) sessionAddress = c[1]!;
      }
    } else if (inAudio && line.startsWith('a=rtpmap:')) {
      const a = /^a=rtpmap:(\d+) ([^/]+)\//.exec(line);
      if (a) rtpmap.set(Number(a[1]), a[2]!.toUpperCase());
    }
  }
  const address = mediaAddress ?? sessionAddress;
  if (!media || media.port === 0 || !address) return null;
  for (const pt of media.pts) {
    const name = rtpmap.get(pt) ?? (pt === 0 ? 'PCMU' : pt === 8 ? 'PCMA' : null);
    if ((name === 'PCMA' || name === 'PCMU') && offered.includes(name) && PAYLOAD_TYPES[name] === pt) return { address, port: media.port, codec: name };
  }
  return null;
}
