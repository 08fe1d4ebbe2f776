/**
 * The simulated phones: what each number received — the text of a delivered SMS or RCS text message, what an
 * answered call said — kept in the simulator's records, so a sandbox user or a test reads a code the way a person
 * would (`GET /admin/v1/simulator/handsets/{msisdn}/messages`).
 */
import type { ConnectorRecord, ConnectorRecords, OutboundMessage } from '../../core/ports.ts';

const PREFIX = 'handset:';
/** Newest first: keys sort by the time of receipt, written with a fixed width. */
const TIME_WIDTH = 15;

export interface HandsetMessage {
  text: string;
  type: string;
  messageId: string;
  receivedAt: number;
}

/** What the person got of a message, as text: an SMS's text, a call's words (title, then message), an RCS text. */
export function heardText(m: Pick<OutboundMessage, 'type' | 'body'>): string | null {
  const text = typeof m.body.text === 'string' ? m.body.text : null;
  if (m.type === 'VOICE') {
    const title = typeof m.body.title === 'string' && m.body.title !== '' ? m.body.title : null;
    return text === null ? title : title === null ? text : `${title}\n${text}`;
  }
  if (m.type === 'RCS') return m.body.type === 'TEXT' ? text : null;
  return text;
}

/** The record of a message received by `msisdn` at `at`. */
export function handsetRecord(msisdn: string, message: Omit<HandsetMessage, 'receivedAt'>, at: number): ConnectorRecord {
  return {
    key: `${PREFIX}${msisdn}:${String(at).padStart(TIME_WIDTH, '0')}:${message.messageId}`,
    data: { ...message, receivedAt: at },
    dueAt: null,
  };
}

/** What `msisdn` received, newest first. */
export async function handsetInbox(records: ConnectorRecords, msisdn: string, limit: number): Promise<HandsetMessage[]> {
  const rows = await records.list(`${PREFIX}${msisdn}:`, limit);
  return rows.map((r) => r.data as unknown as HandsetMessage);
}
