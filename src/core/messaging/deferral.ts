/**
 * Marketing windows on the accept path: a message whose send time falls outside its window is accepted, priced as
 * ever, and scheduled at the window's next opening plus its place on the channel's ramp. Every door's messages pass
 * here (REST, SMPP, legacy HTTP, campaigns), once.
 */
import { iso } from '../../domain/dates.ts';
import { closingAfter, nextOpening, rampCapacity, rampSendAt, type SendingWindow } from '../../domain/sending-window.ts';
import { rescheduleMessages } from '../../store/campaigns.ts';
import type { Channel } from '../../store/channels.ts';
import type { Db } from '../../store/db.ts';
import { type MessageRow, updateMessageExtra } from '../../store/messages.ts';
import { takeRampPlaces } from '../../store/sending-windows.ts';
import type { SendingWindows } from '../tenancy/sending-windows.ts';
import type { PreparedMessage } from './accept.ts';

/** The extra fields (JSON text) with `fields` set, or removed where undefined; null when none are left. */
function withExtra(extra: string | null, fields: Record<string, unknown>): string | null {
  const all: Record<string, unknown> = { ...(extra ? (JSON.parse(extra) as Record<string, unknown>) : {}), ...fields };
  for (const [k, v] of Object.entries(all)) if (v === undefined) delete all[k];
  return Object.keys(all).length > 0 ? JSON.stringify(all) : null;
}

function addExtra(row: MessageRow, fields: Record<string, unknown>): void {
  row.extra = withExtra(row.extra, fields);
}

/** Past this many openings, what is left of a ramp stays on the last one (a window of a few seconds a day). */
const MAX_RAMP_HOPS = 1_000;

/**
 * When `count` messages deferred to `opening` on a channel go: each takes the next place on the ramp of that opening,
 * unless its place would leave at or after the window's closing that day; then it waits for the next opening and
 * takes a place on that one's ramp (before the messages deferred to it later), and so on.
 */
async function rampTimes(db: Db, channelId: string, held: { window: SendingWindow; timeZone: string }, opening: number, count: number): Promise<number[]> {
  const rate = held.window.rampPerSecond;
  const times: number[] = [];
  let at = opening;
  for (let hop = 0; times.length < count; hop++) {
    const left = count - times.length;
    const first = await takeRampPlaces(db, channelId, at, left);
    const closing = closingAfter(held.window, held.timeZone, at);
    const next = closing === null || hop >= MAX_RAMP_HOPS ? null : nextOpening(held.window, held.timeZone, closing);
    const room = next === null ? left : Math.max(0, Math.min(left, rampCapacity(at, closing!, rate) - first));
    for (let i = 0; i < room; i++) times.push(rampSendAt(at, first + i, rate));
    if (next !== null) at = next;
  }
  return times;
}

/**
 * Defers the batch's messages sent outside their window. The messages deferred to one opening on one channel take
 * consecutive places on its ramp (in the order they are accepted, across nodes: the places are counted in the
 * database) and leave at `opening + place / rampPerSecond`; a place past the window's closing waits for the next
 * opening. A message sent with the window override goes when asked,
 * and says so (`windowOverride`).
 */
export async function deferOutsideWindows(db: Db, windows: SendingWindows, batch: readonly PreparedMessage[], now: number): Promise<void> {
  const groups = new Map<string, { channelId: string; opening: number; held: { window: SendingWindow; timeZone: string }; messages: PreparedMessage[] }>();
  for (const p of batch) {
    if (p.rejection !== null || p.settled) continue;
    const held = await windows.forChannel(p.channel, now);
    if (!held) continue;
    if (p.windowOverride) {
      addExtra(p.row, { windowOverride: true });
      continue;
    }
    const sendAt = Math.max(p.row.send_at, now);
    const opening = nextOpening(held.window, held.timeZone, sendAt);
    // A window that never opens (every day a holiday) holds nothing: windowProblem refuses the likely ones.
    if (opening === null || opening === sendAt) continue;
    const key = `${p.channel.id}|${opening}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { channelId: p.channel.id, opening, held, messages: [] }));
    group.messages.push(p);
  }
  for (const g of groups.values()) {
    const times = await rampTimes(db, g.channelId, g.held, g.opening, g.messages.length);
    for (const [i, p] of g.messages.entries()) {
      const at = times[i]!;
      if (p.row.validity_until !== null) p.row.validity_until += at - p.row.send_at;
      p.row.send_at = at;
      p.row.status = 'SCHEDULED';
      addExtra(p.row, { deferredUntil: iso(at) });
    }
  }
}

/**
 * Moves scheduled messages of one channel (a campaign's, oldest first) to `sendAt`, in the caller's transaction: when
 * that is outside the channel's window, to its next opening on the ramp, as at accept. Answers how many moved (a
 * message a dispatcher holds does not) and the time the first one goes.
 */
export async function rescheduleInWindow(
  db: Db,
  windows: SendingWindows,
  channel: Channel,
  messages: readonly MessageRow[],
  sendAt: number,
  now: number,
): Promise<{ moved: number; firstAt: number }> {
  const held = await windows.forChannel(channel, now);
  const opening = held ? nextOpening(held.window, held.timeZone, sendAt) : null;
  if (!held || opening === null || opening === sendAt) {
    const moved = await rescheduleMessages(
      db,
      messages.map((m) => m.id),
      sendAt,
      now,
    );
    for (const m of messages) if (m.extra?.includes('"deferredUntil"')) await updateMessageExtra(db, m.id, withExtra(m.extra, { deferredUntil: undefined }));
    return { moved, firstAt: sendAt };
  }
  const times = await rampTimes(db, channel.id, held, opening, messages.length);
  let moved = 0;
  for (const [i, m] of messages.entries()) {
    const at = times[i]!;
    moved += await rescheduleMessages(db, [m.id], at, now);
    await updateMessageExtra(db, m.id, withExtra(m.extra, { deferredUntil: iso(at) }));
  }
  return { moved, firstAt: times[0] ?? opening };
}
