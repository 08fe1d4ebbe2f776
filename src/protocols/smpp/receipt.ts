/**
 * SMPP delivery receipt text (SMPP 3.4 Appendix B), message_state values (§5.2.28) and SMPP time strings (§7.1.1).
 */

export type ReceiptStat = 'DELIVRD' | 'EXPIRED' | 'DELETED' | 'UNDELIV' | 'ACCEPTD' | 'UNKNOWN' | 'REJECTD' | 'ENROUTE';

/** message_state TLV / query_sm_resp values. */
export const MESSAGE_STATE = {
  ENROUTE: 1,
  DELIVERED: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNDELIVERABLE: 5,
  ACCEPTED: 6,
  UNKNOWN: 7,
  REJECTED: 8,
} as const;

const STATE_OF_STAT: Readonly<Record<ReceiptStat, number>> = {
  ENROUTE: MESSAGE_STATE.ENROUTE,
  DELIVRD: MESSAGE_STATE.DELIVERED,
  EXPIRED: MESSAGE_STATE.EXPIRED,
  DELETED: MESSAGE_STATE.DELETED,
  UNDELIV: MESSAGE_STATE.UNDELIVERABLE,
  ACCEPTD: MESSAGE_STATE.ACCEPTED,
  UNKNOWN: MESSAGE_STATE.UNKNOWN,
  REJECTD: MESSAGE_STATE.REJECTED,
};

export function messageState(stat: ReceiptStat): number {
  return STATE_OF_STAT[stat];
}

export function statForMessageState(state: number): ReceiptStat {
  for (const [stat, value] of Object.entries(STATE_OF_STAT)) if (value === state) return stat as ReceiptStat;
  return 'UNKNOWN';
}

export interface ReceiptFields {
  id: string;
  /** Parts submitted; default 1. */
  sub?: number;
  /** Parts delivered; default 1 for DELIVRD, else 0. */
  dlvrd?: number;
  submitDate: Date;
  doneDate: Date;
  stat: ReceiptStat;
  /** Network or SMSC error code, shown as three digits when numeric. */
  err?: number | string;
  /** The message text; only its first 20 characters are shown. */
  text?: string;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** YYMMDDhhmm in UTC. */
export function formatReceiptDate(d: Date): string {
  return pad(d.getUTCFullYear() % 100, 2) + pad(d.getUTCMonth() + 1, 2) + pad(d.getUTCDate(), 2) + pad(d.getUTCHours(), 2) + pad(d.getUTCMinutes(), 2);
}

function count(n: number): string {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`receipt counts are non-negative integers, got ${n}`);
  return pad(n, 3);
}

export function formatReceiptText(r: ReceiptFields): string {
  const sub = r.sub ?? 1;
  const dlvrd = r.dlvrd ?? (r.stat === 'DELIVRD' ? sub : 0);
  const err = typeof r.err === 'number' ? count(r.err) : (r.err ?? '000');
  // The first 20 characters, never half of a surrogate pair.
  const text = Array.from(r.text ?? '')
    .slice(0, 20)
    .join('');
  return (
    `id:${r.id} sub:${count(sub)} dlvrd:${count(dlvrd)} submit date:${formatReceiptDate(r.submitDate)} ` +
    `done date:${formatReceiptDate(r.doneDate)} stat:${r.stat} err:${err} text:${text}`
  );
}

export interface ParsedReceipt {
  id: string;
  sub?: number;
  dlvrd?: number;
  submitDate?: Date;
  doneDate?: Date;
  /** Upper-cased; long spellings (DELIVERED, UNDELIVERABLE, …) are mapped to the standard seven letters. */
  stat?: string;
  err?: string;
  text?: string;
}

const STAT_ALIASES: Readonly<Record<string, ReceiptStat>> = {
  DELIVERED: 'DELIVRD',
  UNDELIVERABLE: 'UNDELIV',
  UNDELIVERED: 'UNDELIV',
  ACCEPTED: 'ACCEPTD',
  REJECTED: 'REJECTD',
  DELETED: 'DELETED',
  EXPIRED: 'EXPIRED',
  UNKNOWN: 'UNKNOWN',
  ENROUTE: 'ENROUTE',
};

/** 10 (YYMMDDhhmm) or 12 (…ss) digits, read as UTC; anything else is undefined. */
export function parseReceiptDate(s: string): Date | undefined {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?$/.exec(s);
  if (!m) return undefined;
  const [, yy, mo, dd, hh, mi, ss] = m;
  const d = utcDate(2000 + Number(yy), Number(mo), Number(dd), Number(hh), Number(mi), Number(ss ?? 0), 0);
  return d ?? undefined;
}

function field(s: string, name: string): string | undefined {
  // Field names in any case, spaces or underscores inside "submit date"/"done date", spaces around the colon.
  const re = new RegExp(`(?:^|\\s)${name}\\s*:\\s*(\\S*)`, 'i');
  const value = re.exec(s)?.[1];
  // "id: sub:001": the value is missing and the next field was taken for it.
  return value && !/^[a-z_]+:/i.test(value) ? value : undefined;
}

/**
 * Reads a receipt text as SMSCs send it, tolerating case, extra spaces and missing fields. Returns null when there
 * is no `id:` at all (not a receipt). `text:` runs to the end of the string.
 */
export function parseReceiptText(s: string): ParsedReceipt | null {
  const textAt = /(?:^|\s)text\s*:/i.exec(s);
  const head = textAt ? s.slice(0, textAt.index) : s;
  const id = field(head, 'id');
  if (!id) return null;
  const out: ParsedReceipt = { id };
  const int = (v: string | undefined): number | undefined => (v && /^\d+$/.test(v) ? Number(v) : undefined);
  const sub = int(field(head, 'sub'));
  if (sub !== undefined) out.sub = sub;
  const dlvrd = int(field(head, 'dlvrd'));
  if (dlvrd !== undefined) out.dlvrd = dlvrd;
  const submit = field(head, 'submit[\\s_]*date');
  const submitDate = submit ? parseReceiptDate(submit) : undefined;
  if (submitDate) out.submitDate = submitDate;
  const done = field(head, 'done[\\s_]*date');
  const doneDate = done ? parseReceiptDate(done) : undefined;
  if (doneDate) out.doneDate = doneDate;
  const stat = field(head, 'stat')?.toUpperCase();
  if (stat) out.stat = STAT_ALIASES[stat] ?? stat;
  const err = field(head, 'err');
  if (err) out.err = err;
  if (textAt) out.text = s.slice(textAt.index + textAt[0].length);
  return out;
}

export class SmppTimeError extends Error {
  override readonly name = 'SmppTimeError';
}

function utcDate(y: number, mo: number, d: number, h: number, mi: number, s: number, tenths: number): Date | null {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d > daysInMonth) return null;
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s, tenths * 100));
}

/**
 * schedule_delivery_time / validity_period: '' is null (not set); `YYMMDDhhmmsstnn+|-` is absolute, local time
 * `nn` quarter hours ahead of (+) or behind (-) UTC; `YYMMDDhhmmss000R` is relative to `now`. Throws
 * SmppTimeError on anything else. Years are 2000–2099.
 */
export function parseSmppTime(s: string, now: Date = new Date()): Date | null {
  if (s === '') return null;
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d)(\d{2})([-+R])$/.exec(s);
  if (!m) throw new SmppTimeError(`'${s}' is not an SMPP time (YYMMDDhhmmsstnnp)`);
  const [yy, mo, dd, hh, mi, ss, t, nn] = m.slice(1, 9).map(Number) as [number, number, number, number, number, number, number, number];
  const p = m[9];
  if (p === 'R') {
    const d = new Date(now.getTime());
    // Calendar units first (a month is not a fixed length), then the fixed ones.
    d.setUTCFullYear(d.getUTCFullYear() + yy, d.getUTCMonth() + mo, d.getUTCDate() + dd);
    return new Date(d.getTime() + ((hh * 60 + mi) * 60 + ss) * 1000);
  }
  if (nn > 48) throw new SmppTimeError(`'${s}': UTC offset ${nn} quarter hours is more than 48`);
  const local = utcDate(2000 + yy, mo, dd, hh, mi, ss, t);
  if (!local) throw new SmppTimeError(`'${s}' is not a valid date and time`);
  const offsetMs = nn * 15 * 60_000 * (p === '+' ? 1 : -1);
  return new Date(local.getTime() - offsetMs);
}

/** Absolute SMPP time in UTC (offset 00+), as in query_sm_resp.final_date. */
export function formatSmppTime(d: Date): string {
  return (
    pad(d.getUTCFullYear() % 100, 2) +
    pad(d.getUTCMonth() + 1, 2) +
    pad(d.getUTCDate(), 2) +
    pad(d.getUTCHours(), 2) +
    pad(d.getUTCMinutes(), 2) +
    pad(d.getUTCSeconds(), 2) +
    String(Math.floor(d.getUTCMilliseconds() / 100)) +
    '00+'
  );
}
